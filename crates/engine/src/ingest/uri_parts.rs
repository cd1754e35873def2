//! The `uri_parts` processor: a URI's parts as Elasticsearch's UriPartsProcessor names them
//! (`scheme`, `domain`, `port`, `path`, `extension`, `query`, `fragment`, `user_info`,
//! `username`, `password`, `original`), split as RFC 3986 reads a URI reference (relative
//! ones too: a request line's `/index.html?x=1`), with the parts percent-decoded as
//! `java.net.URI`'s getters give them.

use crate::ingest::doc::IngestDoc;
use crate::ingest::processors::Options;
use serde_json::{Map, Value};

pub struct UriParts {
    field: String,
    target: String,
    keep_original: bool,
    remove_if_successful: bool,
    ignore_missing: bool,
}

impl UriParts {
    pub fn parse(o: &mut Options) -> Result<UriParts, String> {
        Ok(UriParts {
            field: o.required("field")?,
            target: o.string("target_field")?.unwrap_or_else(|| "url".into()),
            keep_original: o.flag("keep_original", true)?,
            remove_if_successful: o.flag("remove_if_successful", false)?,
            ignore_missing: o.flag("ignore_missing", false)?,
        })
    }

    pub fn run(&self, doc: &mut IngestDoc) -> Result<(), String> {
        let Some(text) = doc.text_of(&self.field, self.ignore_missing)? else {
            return Ok(());
        };
        let mut parts = parts(&text)?;
        if self.keep_original {
            parts.insert("original".into(), Value::from(text));
        }
        if self.remove_if_successful && self.field != self.target {
            doc.remove(&self.field);
        }
        doc.set(&self.target, Value::Object(parts))
    }
}

/// The parts of one URI reference.
fn parts(text: &str) -> Result<Map<String, Value>, String> {
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("unable to parse URI [{text}]"));
    }
    let mut out = Map::new();
    let (rest, fragment) = match text.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (text, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    // A scheme: letters first, then letters, digits, `+`, `-`, `.`, before the first `:`
    // and before any `/`.
    let scheme_end = rest.find(':').filter(|&i| {
        i > 0
            && rest[..i].starts_with(|c: char| c.is_ascii_alphabetic())
            && rest[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    let (scheme, rest) = match scheme_end {
        Some(i) => (Some(&rest[..i]), &rest[i + 1..]),
        None => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => {
            let end = r.find('/').unwrap_or(r.len());
            (Some(&r[..end]), &r[end..])
        }
        None => (None, rest),
    };
    if let Some(authority) = authority {
        let (user_info, host_port) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (host, port) = split_port(host_port)?;
        if !host.is_empty() {
            out.insert("domain".into(), Value::from(host));
        }
        if let Some(port) = port {
            out.insert("port".into(), Value::from(port));
        }
        if let Some(u) = user_info {
            let u = decoded(u);
            if let Some((name, password)) = u.split_once(':') {
                out.insert("username".into(), Value::from(name));
                out.insert("password".into(), Value::from(password));
            } else {
                out.insert("username".into(), Value::from(u.clone()));
            }
            out.insert("user_info".into(), Value::from(u));
        }
    }
    let path = decoded(path);
    if let Some(dot) = path.rfind('.') {
        out.insert("extension".into(), Value::from(&path[dot + 1..]));
    }
    out.insert("path".into(), Value::from(path));
    if let Some(q) = query {
        out.insert("query".into(), Value::from(decoded(q)));
    }
    if let Some(f) = fragment {
        out.insert("fragment".into(), Value::from(decoded(f)));
    }
    if let Some(s) = scheme {
        out.insert("scheme".into(), Value::from(s));
    }
    Ok(out)
}

/// `host:port` (an IPv6 host in brackets); a port that is no number fails, as in Java.
fn split_port(host_port: &str) -> Result<(&str, Option<u16>), String> {
    let colon = match host_port.strip_prefix('[') {
        Some(r) => r
            .find(']')
            .map(|i| i + 2)
            .filter(|&i| host_port[i..].starts_with(':')),
        None => host_port.rfind(':'),
    };
    match colon {
        None => Ok((host_port, None)),
        Some(i) if i + 1 == host_port.len() => Ok((&host_port[..i], None)),
        Some(i) => {
            let port = host_port[i + 1..].parse::<u16>().map_err(|_| {
                format!("unable to parse URI: the port of [{host_port}] is not a number")
            })?;
            Ok((&host_port[..i], Some(port)))
        }
    }
}

/// Percent-decoding (invalid or incomplete escapes kept as written).
fn decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_are_named_as_elasticsearch_names_them() {
        let p = parts(
            "http://myusername:mypassword@www.example.com:80/foo.gif?key1=val1&key2=val2#fragment",
        )
        .unwrap();
        assert_eq!(
            Value::Object(p),
            json!({"domain": "www.example.com", "port": 80, "username": "myusername", "password": "mypassword",
                   "user_info": "myusername:mypassword", "extension": "gif", "path": "/foo.gif",
                   "query": "key1=val1&key2=val2", "fragment": "fragment", "scheme": "http"})
        );
        // A request line's relative reference, decoded.
        let p = parts("/a%20b/index.html?x=%2F").unwrap();
        assert_eq!(
            Value::Object(p),
            json!({"extension": "html", "path": "/a b/index.html", "query": "x=/"})
        );
        let p = parts("https://[2001:db8::1]:8443/").unwrap();
        assert_eq!(
            (p["domain"].as_str(), p["port"].as_u64()),
            (Some("[2001:db8::1]"), Some(8443))
        );
        assert!(parts("http://h:notaport/").is_err());
        assert!(parts("has space").is_err());
    }
}
