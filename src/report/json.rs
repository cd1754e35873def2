//! The stored race and the cross-trial summary, as one JSON document.

use super::{Exporter, Summary};

pub struct Json;

impl Exporter for Json {
    fn render(&self, s: &Summary) -> String {
        serde_json::to_string_pretty(s).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}
