//! The stored race and the cross-trial summary, as one JSON document.

use super::{Render, Summary};

pub struct Json;

impl Render<Summary<'_>> for Json {
    fn render(&self, s: &Summary) -> String {
        serde_json::to_string_pretty(s).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}
