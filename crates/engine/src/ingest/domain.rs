//! The `registered_domain` processor: a domain name's registered domain, its effective
//! top-level domain and its subdomain, by the Public Suffix List (ICANN and private
//! sections, as Elasticsearch reads it), from the `psl` crate's copy of the list.

use crate::ingest::doc::IngestDoc;
use crate::ingest::processors::Options;
use serde_json::Value;

pub struct RegisteredDomain {
    field: String,
    target: String,
    ignore_missing: bool,
}

/// A name's parts: (registered domain, top-level domain, subdomain), when the list knows
/// its suffix and the name is longer than it.
pub fn parts(fqdn: &str) -> Option<(String, String, Option<String>)> {
    let domain = psl::domain(fqdn.as_bytes())?;
    // The list's `*` rule makes any last label a suffix; Elasticsearch knows only listed ones.
    domain.suffix().typ()?;
    let registered = String::from_utf8(domain.as_bytes().to_vec()).ok()?;
    let suffix = String::from_utf8(domain.suffix().as_bytes().to_vec()).ok()?;
    let sub = fqdn
        .strip_suffix(registered.as_str())
        .and_then(|s| s.strip_suffix('.'))
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    Some((registered, suffix, sub))
}

impl RegisteredDomain {
    pub fn parse(o: &mut Options) -> Result<RegisteredDomain, String> {
        Ok(RegisteredDomain {
            field: o.required("field")?,
            target: o.string("target_field")?.unwrap_or_default(),
            ignore_missing: o.flag("ignore_missing", true)?,
        })
    }

    pub fn run(&self, doc: &mut IngestDoc) -> Result<(), String> {
        let fqdn = match doc.get(&self.field) {
            Some(v) if v.is_string() => v.as_str().unwrap_or_default().to_string(),
            Some(v) if !v.is_null() => {
                return Err(format!(
                    "field [{}] of type [{v}] cannot be cast to a string",
                    self.field
                ))
            }
            _ if self.ignore_missing => return Ok(()),
            _ => {
                return Err(format!(
                    "field [{}] not present as part of path [{}]",
                    self.field, self.field
                ))
            }
        };
        let Some((registered, suffix, sub)) = parts(&fqdn) else {
            return match self.ignore_missing {
                true => Ok(()),
                false => Err("unable to set domain information for document".into()),
            };
        };
        let prefix = match self.target.is_empty() {
            true => String::new(),
            false => format!("{}.", self.target),
        };
        doc.set(&format!("{prefix}domain"), Value::from(fqdn))?;
        doc.set(
            &format!("{prefix}registered_domain"),
            Value::from(registered),
        )?;
        doc.set(&format!("{prefix}top_level_domain"), Value::from(suffix))?;
        if let Some(sub) = sub {
            doc.set(&format!("{prefix}subdomain"), Value::from(sub))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_as_elasticsearchs_own_tests_expect() {
        let own = |r: &str, s: &str, sub: Option<&str>| {
            Some((r.to_string(), s.to_string(), sub.map(str::to_string)))
        };
        assert_eq!(
            parts("www.google.com"),
            own("google.com", "com", Some("www"))
        );
        assert_eq!(parts("google.com"), own("google.com", "com", None));
        assert_eq!(
            parts("www.books.amazon.co.uk"),
            own("amazon.co.uk", "co.uk", Some("www.books"))
        );
        // A private suffix counts.
        assert_eq!(
            parts("1.www.global.ssl.fastly.net"),
            own(
                "www.global.ssl.fastly.net",
                "global.ssl.fastly.net",
                Some("1")
            )
        );
        for unknown in ["", ".", "$", "foo.bar.baz", "com"] {
            assert_eq!(parts(unknown), None, "{unknown}");
        }
    }
}
