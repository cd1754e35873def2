//! Index-name patterns as Elasticsearch reads them: `_all`, and `*` matching any run of
//! characters. The one matcher for indices, aliases, data streams, templates' patterns and
//! pipeline ids.

pub fn index_pattern_matches(pattern: &str, name: &str) -> bool {
    pattern == "_all" || simple_match(pattern, name)
}

/// `*` matches any run of characters; everything else matches itself (Elasticsearch's
/// `Regex.simpleMatch`, for index patterns, dynamic templates and field patterns alike). The
/// greedy two-pointer match: time in proportion to the pattern times the name at worst, so a
/// pattern a client sends (`filter_path`, `_source`) cannot make it exponential.
pub fn simple_match(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    // The last star seen, and where in the name its run would end next.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Elasticsearch's rules for a new index's name, in its words.
pub fn check_index_name(name: &str) -> Result<(), String> {
    if name != name.to_lowercase() {
        return Err(format!("Invalid index name [{name}], must be lowercase"));
    }
    check_name(name).map_err(|why| format!("Invalid index name [{name}], {why}"))
}

/// Elasticsearch's rules for an alias name (an index name's, less the lowercase one).
pub fn check_alias_name(name: &str) -> Result<(), String> {
    check_name(name).map_err(|why| format!("Invalid alias name [{name}]: {why}"))
}

fn check_name(name: &str) -> Result<(), String> {
    const FORBIDDEN: [char; 12] = ['\\', '/', '*', '?', '"', '<', '>', '|', ' ', ',', '#', ':'];
    let why = if name.is_empty() {
        "must not be empty".to_string()
    } else if let Some(c) = name.chars().find(|c| FORBIDDEN.contains(c)) {
        format!("must not contain the following characters [{c}]")
    } else if name.starts_with(['_', '-', '+']) {
        "must not start with '_', '-', or '+'".to_string()
    } else if name == "." || name == ".." {
        "must not be '.' or '..'".to_string()
    } else if name.len() > 255 {
        format!("index name is too long, ({} > 255)", name.len())
    } else {
        return Ok(());
    };
    Err(why)
}

#[cfg(test)]
mod tests {
    use super::index_pattern_matches;

    #[test]
    fn names_follow_elasticsearchs_rules() {
        use super::check_index_name;
        assert!(check_index_name("logs-2024.01").is_ok());
        assert!(check_index_name("Logs").unwrap_err().contains("lowercase"));
        assert!(check_index_name("a,b").unwrap_err().contains("[,]"));
        assert!(check_index_name("_x").is_err());
        assert!(check_index_name("").is_err());
        assert!(check_index_name(&"a".repeat(256)).is_err());
    }

    #[test]
    fn many_stars_stay_fast() {
        let name = "a".repeat(5_000);
        let pattern = format!("{}b", "*a".repeat(40));
        assert!(!super::simple_match(&pattern, &name));
        assert!(super::simple_match("*a*a*", &name));
        assert!(super::simple_match("a*", "a"));
        assert!(super::simple_match("*", ""));
        assert!(!super::simple_match("a*b", "ab-c"));
        assert!(super::simple_match("é*ü", "éxxü"));
    }

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
