//! The `user_agent` processor: a browser's, operating system's and device's names and versions
//! out of a User-Agent string, by ua-parser's regexes (uap-core 0.18, in
//! `user_agent/regexes.yaml`: the table whose answers Elasticsearch's tests expect), read as
//! Elasticsearch's `UserAgentParser` reads them. The first pattern of each list found in the
//! string gives the name (a replacement's `$1` is the first group) and versions (groups 2 to
//! 5, or the replacements). Results are cached per string, as Elasticsearch caches them
//! (`ingest.user_agent.cache_size`, 1,000).

use crate::ingest::doc::IngestDoc;
use crate::ingest::processors::Options;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

const REGEXES: &str = include_str!("user_agent/regexes.yaml");
/// Strings whose details are kept, as Elasticsearch's default cache.
const CACHE_SIZE: usize = 1_000;
/// Longer strings are parsed each time rather than kept (the cache stays a few MB however
/// long a document's field is).
const CACHED_LEN: usize = 4_096;

#[derive(Clone, Copy, PartialEq)]
enum Property {
    Name,
    Os,
    Device,
    Original,
    Version,
}

const PROPERTIES: [(&str, Property); 5] = [
    ("name", Property::Name),
    ("os", Property::Os),
    ("device", Property::Device),
    ("original", Property::Original),
    ("version", Property::Version),
];

pub struct UserAgent {
    field: String,
    target: String,
    properties: Vec<Property>,
    ignore_missing: bool,
}

impl UserAgent {
    pub fn parse(o: &mut Options) -> Result<UserAgent, String> {
        let field = o.required("field")?;
        // Elasticsearch drops the old `ecs` option when it reads a pipeline.
        o.take("ecs");
        let target = o
            .string("target_field")?
            .unwrap_or_else(|| "user_agent".into());
        if let Some(file) = o.string("regex_file")? {
            return Err(format!(
                "[regex_file] regex file [{file}] doesn't exist (has to exist at node startup)"
            ));
        }
        if o.flag("extract_device_type", false)? {
            return Err("[extract_device_type] is not run by the embedded engine (it needs Elasticsearch's device type regexes)".into());
        }
        let properties = match o.take("properties") {
            None => PROPERTIES.iter().map(|(_, p)| *p).collect(),
            Some(Value::Array(names)) => {
                let mut out = Vec::new();
                for n in names {
                    let name = n.as_str().map(str::to_ascii_lowercase).unwrap_or_default();
                    let Some((_, p)) = PROPERTIES.iter().find(|(k, _)| *k == name) else {
                        return Err(format!("[properties] illegal property value [{}]. valid values are [NAME, OS, DEVICE, ORIGINAL, VERSION]", n.as_str().unwrap_or_default()));
                    };
                    if !out.contains(p) {
                        out.push(*p);
                    }
                }
                // Elasticsearch keeps them as an EnumSet: in the enum's order.
                out.sort_by_key(|p| PROPERTIES.iter().position(|(_, q)| q == p));
                out
            }
            Some(other) => {
                return Err(format!(
                    "[properties] property isn't a list, but of type [{other}]"
                ))
            }
        };
        // The regexes compile once, when the first such processor is made (a bad table is
        // the engine's bug, named here rather than on a document).
        parser()?;
        Ok(UserAgent {
            field,
            target,
            properties,
            ignore_missing: o.flag("ignore_missing", false)?,
        })
    }

    pub fn run(&self, doc: &mut IngestDoc) -> Result<(), String> {
        let text = match doc.get(&self.field).map(|v| v.into_owned()) {
            None if self.ignore_missing => return Ok(()),
            None => {
                return Err(format!(
                    "field [{0}] not present as part of path [{0}]",
                    self.field
                ))
            }
            Some(Value::Null) if self.ignore_missing => return Ok(()),
            Some(Value::Null) => {
                return Err(format!(
                    "field [{}] is null, cannot parse user-agent.",
                    self.field
                ))
            }
            Some(Value::String(s)) => s,
            Some(other) => {
                return Err(format!(
                    "field [{}] of type [{}] cannot be cast to a string",
                    self.field,
                    crate::ingest::doc::kind(&other)
                ))
            }
        };
        let details = parser()?.details(&text);
        doc.set(&self.target, Value::Object(self.shown(&details, &text)))
    }

    /// The target object, as Elasticsearch's UserAgentProcessor fills it.
    fn shown(&self, d: &Details, text: &str) -> Map<String, Value> {
        let mut out = Map::new();
        for p in &self.properties {
            match p {
                Property::Original => {
                    out.insert("original".into(), Value::from(text));
                }
                Property::Name => {
                    let name = d.agent.as_ref().map_or("Other", |a| a.name.as_str());
                    out.insert("name".into(), Value::from(name));
                }
                Property::Version => {
                    if let Some(v) = d.agent.as_ref().and_then(Versioned::version) {
                        out.insert("version".into(), Value::from(v));
                    }
                }
                Property::Os => {
                    if let Some(os) = &d.os {
                        let mut m = Map::new();
                        m.insert("name".into(), Value::from(os.name.as_str()));
                        if let Some(v) = os.version() {
                            m.insert("version".into(), Value::from(v.as_str()));
                            m.insert("full".into(), Value::from(format!("{} {v}", os.name)));
                        }
                        out.insert("os".into(), Value::Object(m));
                    }
                }
                Property::Device => {
                    let name = d.device.as_ref().map_or("Other", |a| a.name.as_str());
                    out.insert("device".into(), serde_json::json!({ "name": name }));
                }
            }
        }
        out
    }
}

/// A name and up to four version parts.
#[derive(Clone, Debug, PartialEq)]
struct Versioned {
    name: String,
    parts: [Option<String>; 4],
}

impl Versioned {
    /// `major.minor.patch.build`, as far as the parts go without a gap.
    fn version(&self) -> Option<String> {
        let mut out = String::new();
        for (i, p) in self.parts.iter().enumerate() {
            let Some(p) = p else { break };
            if i > 0 {
                out.push('.');
            }
            out.push_str(p);
        }
        (!out.is_empty()).then_some(out)
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Details {
    agent: Option<Versioned>,
    os: Option<Versioned>,
    device: Option<Versioned>,
}

/// One pattern of a list, with its replacements.
struct Sub {
    re: regex::bytes::Regex,
    name: Option<String>,
    versions: [Option<String>; 4],
}

/// One list of patterns, with a set of them all: one pass over the string finds which match,
/// and only those (in order) are asked for their groups.
struct List {
    subs: Vec<Sub>,
    any: regex::bytes::RegexSet,
}

impl List {
    fn new(subs: Vec<Sub>) -> Result<List, String> {
        let any = regex::bytes::RegexSetBuilder::new(subs.iter().map(|s| s.re.as_str()))
            .size_limit(512 << 20)
            .dfa_size_limit(64 << 20)
            .build()
            .map_err(|e| format!("the user agent regexes as one set: {e}"))?;
        Ok(List { subs, any })
    }

    /// Elasticsearch's `findMatch`: the first pattern found in `text` that names something.
    fn first(&self, text: &str) -> Option<Versioned> {
        self.any
            .matches(text.as_bytes())
            .iter()
            .find_map(|i| self.subs[i].matched(text))
    }
}

struct Parser {
    agents: List,
    systems: List,
    devices: List,
    cache: Mutex<HashMap<String, Arc<Details>>>,
}

fn parser() -> Result<&'static Parser, String> {
    static PARSER: OnceLock<Result<Parser, String>> = OnceLock::new();
    PARSER
        .get_or_init(|| Parser::load(REGEXES))
        .as_ref()
        .map_err(Clone::clone)
}

impl Parser {
    fn load(yaml: &str) -> Result<Parser, String> {
        let doc: serde_yaml::Value =
            serde_yaml::from_str(yaml).map_err(|e| format!("the user agent regexes: {e}"))?;
        let list = |key: &str, name: &str, versions: [&str; 4]| -> Result<List, String> {
            let Some(items) = doc.get(key).and_then(|v| v.as_sequence()) else {
                return Err(format!("the user agent regexes have no `{key}`"));
            };
            let subs = items
                .iter()
                .map(|item| Sub::read(item, name, versions))
                .collect::<Result<Vec<_>, _>>()?;
            List::new(subs)
        };
        Ok(Parser {
            agents: list(
                "user_agent_parsers",
                "family_replacement",
                [
                    "v1_replacement",
                    "v2_replacement",
                    "v3_replacement",
                    "v4_replacement",
                ],
            )?,
            systems: list(
                "os_parsers",
                "os_replacement",
                [
                    "os_v1_replacement",
                    "os_v2_replacement",
                    "os_v3_replacement",
                    "os_v4_replacement",
                ],
            )?,
            devices: list("device_parsers", "device_replacement", ["", "", "", ""])?,
            cache: Mutex::new(HashMap::new()),
        })
    }

    fn details(&self, text: &str) -> Arc<Details> {
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(text)
            .cloned();
        if let Some(d) = cached {
            return d;
        }
        let d = Arc::new(Details {
            agent: self.agents.first(text),
            os: self.systems.first(text),
            device: self.devices.first(text),
        });
        if text.len() > CACHED_LEN {
            return d;
        }
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= CACHE_SIZE {
            cache.clear();
        }
        cache.insert(text.to_string(), d.clone());
        d
    }
}

impl Sub {
    fn read(item: &serde_yaml::Value, name: &str, versions: [&str; 4]) -> Result<Sub, String> {
        let text = |key: &str| -> Option<String> {
            match item.get(key)? {
                serde_yaml::Value::String(s) => Some(s.clone()),
                serde_yaml::Value::Number(n) => Some(n.to_string()),
                serde_yaml::Value::Bool(b) => Some(b.to_string()),
                _ => None,
            }
        };
        let pattern = text("regex").ok_or("a user agent regex entry has no `regex`")?;
        let insensitive = text("regex_flag").as_deref() == Some("i");
        // Bytes, without Unicode classes, as Java's `Pattern` reads these: `\d`, `\w`, `\s`
        // and case-insensitivity are ASCII there (and the tables stay a fraction of the size).
        let flags = if insensitive { "(?i-u)" } else { "(?-u)" };
        let re =
            regex::bytes::RegexBuilder::new(&format!("{flags}{}", java_ascii_classes(&pattern)))
                .size_limit(64 << 20)
                .build()
                .map_err(|e| format!("user agent regex `{pattern}`: {e}"))?;
        Ok(Sub {
            re,
            name: text(name),
            versions: versions.map(|k| if k.is_empty() { None } else { text(k) }),
        })
    }

    /// Elasticsearch's `UserAgentSubpattern.match`.
    fn matched(&self, text: &str) -> Option<Versioned> {
        let c = self.re.captures(text.as_bytes())?;
        let group = |i: usize| {
            c.get(i)
                .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned())
        };
        let groups = c.len() - 1;
        let name = match &self.name {
            Some(n) if n.contains("$1") && groups >= 1 && group(1).is_some() => {
                Some(n.replacen("$1", &group(1).unwrap_or_default(), 1))
            }
            Some(n) => Some(n.clone()),
            None if groups >= 1 => group(1),
            None => None,
        }?;
        let mut parts: [Option<String>; 4] = Default::default();
        for (i, part) in parts.iter_mut().enumerate() {
            *part = match &self.versions[i] {
                Some(v) => Some(v.clone()),
                None if groups > i + 1 => group(i + 2),
                None => None,
            };
        }
        Some(Versioned { name, parts })
    }
}

/// Java's `\d`, `\w` and `\s` are ASCII (the regex crate's are Unicode): written out, inside
/// a class or not.
fn java_ascii_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut in_class = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let set = match next {
                    'd' => Some("0-9"),
                    'w' => Some("a-zA-Z_0-9"),
                    's' => Some(" \\t\\n\\x0B\\f\\r"),
                    _ => None,
                };
                match (set, in_class) {
                    (Some(s), true) => out.push_str(s),
                    (Some(s), false) => {
                        out.push('[');
                        out.push_str(s);
                        out.push(']');
                    }
                    (None, _) => {
                        out.push('\\');
                        out.push(next);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // `[]...]` and `[^]...]` hold a literal `]`.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
