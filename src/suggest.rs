//! "Did you mean" hints for names a user mistyped: track keys, operation types, options.

/// The closest of `candidates` to `given`, if it is close enough to be a likely typo.
pub fn suggest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(given, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// " (did you mean `x`?)" or nothing.
pub fn did_you_mean<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match suggest(given, candidates) {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(suggest("clinets", ["clients", "warmup"]), Some("clients"));
        assert_eq!(suggest("zzz", ["clients", "warmup"]), None);
    }
}
