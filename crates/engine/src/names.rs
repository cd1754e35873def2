//! Index-name patterns as Elasticsearch reads them: `_all`, and `*` matching any run of
//! characters. The one matcher for indices, aliases, data streams, templates' patterns and
//! pipeline ids.

pub fn index_pattern_matches(pattern: &str, name: &str) -> bool {
    if pattern == "_all" {
        return true;
    }
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            let Some(rest) = name.strip_prefix(head) else {
                return false;
            };
            rest.char_indices()
                .map(|(i, _)| i)
                .chain([rest.len()])
                .any(|i| index_pattern_matches(tail, &rest[i..]))
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
}
