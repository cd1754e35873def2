//! Small helpers the engine's modules share.

use std::time::Duration;

/// " (did you mean `x`?)" when a candidate is close to `given`, or nothing.
pub fn did_you_mean<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(given, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

/// A string or a list of strings, as Elasticsearch takes several of its settings.
pub fn string_list(v: Option<&serde_json::Value>) -> Vec<String> {
    match v {
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(serde_json::Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// A time value as Elasticsearch writes them (`30s`, `1m`, `500ms`, `2d`, `100micros`); a
/// bare number is seconds.
pub fn parse_time(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic() || c == 'µ') {
        Some(i) => (&t[..i], t[i..].trim()),
        None => (t, "s"),
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a time value (examples: 30s, 500ms, 2m)"))?;
    let secs = match unit {
        "nanos" | "ns" => value / 1e9,
        "micros" | "us" | "µs" => value / 1e6,
        "ms" => value / 1e3,
        "s" | "sec" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        "d" => value * 86_400.0,
        _ => {
            return Err(format!(
                "`{text}` has an unknown time unit `{unit}` (use nanos, micros, ms, s, m, h or d)"
            ))
        }
    };
    if !secs.is_finite() || secs < 0.0 || secs > u32::MAX as f64 {
        return Err(format!("`{text}` must be a non-negative time value"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// This process's CPU time (user and system), as `_nodes/stats` reports it.
pub fn cpu_time() -> Duration {
    // SAFETY: getrusage writes only the struct passed in.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return Duration::ZERO;
    }
    let tv =
        |t: libc::timeval| Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_values_take_elasticsearch_units() {
        assert_eq!(parse_time("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_time("2d").unwrap(), Duration::from_secs(172_800));
        assert_eq!(parse_time("5").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_time("100micros").unwrap(), Duration::from_micros(100));
        assert!(parse_time("3 weeks").is_err());
        assert!(parse_time("-1s").is_err());
    }

    #[test]
    fn suggestions_only_for_close_names() {
        assert_eq!(
            did_you_mean("mach", ["match", "term"]),
            " (did you mean `match`?)"
        );
        assert_eq!(did_you_mean("zzz", ["match", "term"]), "");
    }
}

/// A JSON value as plain text: a string without its quotes, anything else as JSON.
pub fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
