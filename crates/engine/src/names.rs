//! Index-name patterns as Elasticsearch reads them: `_all`, and `*` matching any run of
//! characters. The one matcher for indices, aliases, data streams, templates' patterns and
//! pipeline ids.

pub fn index_pattern_matches(pattern: &str, name: &str) -> bool {
    pattern == "_all" || simple_match(pattern, name)
}

/// `*` matches any run of characters; everything else matches itself (Elasticsearch's
/// `Regex.simpleMatch`, for index patterns, dynamic templates and field patterns alike).
pub fn simple_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|i| tail.is_char_boundary(*i))
                .any(|i| simple_match(rest, &tail[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::index_pattern_matches;

    #[test]
    fn stars_match_any_run_and_all_matches_everything() {
        assert!(index_pattern_matches("logs-*", "logs-2024"));
        assert!(index_pattern_matches("*-2024", "logs-2024"));
        assert!(index_pattern_matches("l*s-*4", "logs-2024"));
        assert!(!index_pattern_matches("logs-*", "metrics-2024"));
        assert!(index_pattern_matches("_all", "anything"));
        assert!(index_pattern_matches("exact", "exact"));
        assert!(!index_pattern_matches("exact", "exact2"));
    }

    #[test]
    fn simple_matches_have_no_all() {
        assert!(super::simple_match("*-web-*", "logs-web-1"));
        assert!(!super::simple_match("_all", "logs"));
        assert!(super::simple_match("é*", "été"));
    }
}
