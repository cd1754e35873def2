//! URL query parameters: percent-decoded (`%2C`, `+` for a space), as Elasticsearch reads them.

use std::borrow::Cow;

/// `%XX` and `+` decoded; a malformed escape is kept as written.
pub(crate) fn decode(text: &str) -> Cow<'_, str> {
    if !text.contains(['%', '+']) {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() && text.is_char_boundary(i + 3) => {
                match u8::from_str_radix(&text[i + 1..i + 3], 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// A path segment, decoded: `%XX` only (a `+` in a path is a plus).
pub(crate) fn decode_path(segment: &str) -> Cow<'_, str> {
    if !segment.contains('%') {
        return Cow::Borrowed(segment);
    }
    // `+` is kept: decode as a query value would, with every `+` escaped first.
    Cow::Owned(decode(&segment.replace('+', "%2B")).into_owned())
}

/// Every `name=value` pair, decoded; a bare `name` has an empty value.
pub(crate) fn pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
        .map(|(k, v)| (decode(k), decode(v)))
}

/// The value of one parameter, decoded.
pub(crate) fn param<'q>(query: &'q str, name: &str) -> Option<Cow<'q, str>> {
    pairs(query).find(|(k, _)| k == name).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_percent_decoded() {
        assert_eq!(decode("a%2Cb+c"), "a,b c");
        assert_eq!(decode("%3Clogs-%7Bnow%2Fd%7D%3E"), "<logs-{now/d}>");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz"), "%zz");
        assert_eq!(decode_path("a+b%2Fc"), "a+b/c");
        assert_eq!(param("size=5&q=tag%3Aa", "q").as_deref(), Some("tag:a"));
        assert_eq!(param("pretty&size=5", "pretty").as_deref(), Some(""));
        assert_eq!(param("size=5", "from"), None);
    }
}
