//! The ingest processors the engine runs, read from a pipeline body and checked when it is put
//! (an unknown processor or option is refused then, as Elasticsearch refuses it), and run on one
//! document at a time.

use crate::ingest::fingerprint::Fingerprint;
use crate::ingest::fingerprint::Method;
use crate::mapping::dates::DateFormats;
use serde_json::{Map, Value};

mod run;
pub use run::Flow;

/// The processors the engine runs, named in refusals.
pub const SUPPORTED: &str = "set, remove, rename, append, lowercase, uppercase, trim, convert, date, fingerprint, split, join, gsub, json, grok, kv, uri_parts, registered_domain, geoip (with no database: it tags the document as Elasticsearch does before its databases are downloaded), set_security_user (no user: it fails as on a cluster without security), user_agent, foreach, drop, fail, pipeline, reroute";

pub enum Processor {
    Set {
        field: String,
        value: SetValue,
        override_existing: bool,
        ignore_empty_value: bool,
    },
    Remove {
        fields: Vec<String>,
        ignore_missing: bool,
    },
    Rename {
        field: String,
        target: String,
        ignore_missing: bool,
    },
    Append {
        field: String,
        values: Vec<Value>,
        allow_duplicates: bool,
    },
    Text {
        op: TextOp,
        field: String,
        target: String,
        ignore_missing: bool,
    },
    Convert {
        field: String,
        target: String,
        to: ConvertTo,
        ignore_missing: bool,
    },
    Date {
        field: String,
        target: String,
        formats: Vec<DateFormats>,
        /// The zone of dates without an offset, and of the date written (a template).
        timezone: Option<String>,
    },
    Fingerprint(Fingerprint),
    /// A Painless script changing `ctx` (the engine's subset).
    Script(std::sync::Arc<crate::painless::Script>),
    Split {
        field: String,
        target: String,
        separator: regex::Regex,
        ignore_missing: bool,
    },
    Join {
        field: String,
        target: String,
        separator: String,
    },
    Gsub {
        field: String,
        target: String,
        pattern: regex::Regex,
        replacement: String,
        ignore_missing: bool,
    },
    Json {
        field: String,
        target: Option<String>,
        add_to_root: bool,
    },
    Drop,
    Fail(String),
    /// Runs another pipeline, by name, looked up when the document runs.
    Pipeline {
        name: String,
        ignore_missing_pipeline: bool,
    },
    Reroute(String),
    Grok(Box<crate::ingest::grok::Grok>),
    Kv(Box<crate::ingest::kv::Kv>),
    UriParts(Box<crate::ingest::uri_parts::UriParts>),
    RegisteredDomain(Box<crate::ingest::domain::RegisteredDomain>),
    /// A geoip lookup in the named database, which the engine does not have.
    GeoIpUnavailable(String),
    /// A processor run on each element of a list (or each entry of an object).
    Foreach(Box<crate::ingest::Foreach>),
    /// `set_security_user`: the engine has no authentication, so there is no user; as on an
    /// Elasticsearch cluster without security, the pipeline is accepted and the processor
    /// fails on each document (its `on_failure` handlers then run).
    NoActiveUser,
    UserAgent(Box<crate::ingest::user_agent::UserAgent>),
}

pub enum SetValue {
    Template(String),
    Value(Value),
    CopyFrom(String),
}

#[derive(Clone, Copy)]
pub enum TextOp {
    Lower,
    Upper,
    Trim,
}

#[derive(Clone, Copy)]
pub enum ConvertTo {
    Integer,
    Long,
    Float,
    Double,
    Boolean,
    String,
    Ip,
    Auto,
}

/// A processor's options, each taken once; what is left over is refused.
pub struct Options<'a> {
    pub kind: &'a str,
    map: Map<String, Value>,
}

impl<'a> Options<'a> {
    pub fn new(kind: &'a str, map: Map<String, Value>) -> Options<'a> {
        Options { kind, map }
    }

    pub fn take(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key)
    }

    pub fn string(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.map.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(format!(
                "[{key}] of processor [{}] must be a string, got {other}",
                self.kind
            )),
        }
    }

    pub fn required(&mut self, key: &str) -> Result<String, String> {
        self.string(key)?.ok_or_else(|| {
            format!(
                "[{key}] required property is missing (processor [{}])",
                self.kind
            )
        })
    }

    pub fn flag(&mut self, key: &str, default: bool) -> Result<bool, String> {
        match self.map.remove(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(b),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
            Some(other) => Err(format!(
                "[{key}] of processor [{}] must be true or false, got {other}",
                self.kind
            )),
        }
    }

    /// A string or a list of strings.
    pub fn strings(&mut self, key: &str) -> Result<Vec<String>, String> {
        match self.map.remove(key) {
            Some(Value::String(s)) => Ok(vec![s]),
            Some(Value::Array(a)) if !a.is_empty() => a
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    other => Err(format!("[{key}] must list strings, got {other}")),
                })
                .collect(),
            _ => Err(format!(
                "[{key}] required property is missing (processor [{}]: a string or a list of them)",
                self.kind
            )),
        }
    }

    pub fn finish(self) -> Result<(), String> {
        if self.map.is_empty() {
            return Ok(());
        }
        let keys: Vec<&str> = self.map.keys().map(String::as_str).collect();
        Err(format!(
            "processor [{}] doesn't support one or more provided configuration parameters {keys:?}",
            self.kind
        ))
    }
}

fn regex(pattern: &str, key: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("[{key}] is not a regular expression the engine reads: {e}"))
}

impl Processor {
    /// Reads one processor's options (the common ones, `tag`, `if`, ..., already taken).
    pub fn parse(o: &mut Options) -> Result<Processor, String> {
        let field = |o: &mut Options| o.required("field");
        let target_or = |o: &mut Options, field: &str| -> Result<String, String> {
            Ok(o.string("target_field")?
                .unwrap_or_else(|| field.to_string()))
        };
        Ok(match o.kind {
            "set" => parse_set(o)?,
            "remove" => Processor::Remove {
                fields: o.strings("field")?,
                ignore_missing: o.flag("ignore_missing", false)?,
            },
            "rename" => Processor::Rename {
                field: field(o)?,
                target: o.required("target_field")?,
                ignore_missing: o.flag("ignore_missing", false)?,
            },
            "append" => Processor::Append {
                field: field(o)?,
                values: match o.take("value") {
                    Some(Value::Array(a)) => a,
                    Some(v) => vec![v],
                    None => return Err("[value] required property is missing (processor [append])".into()),
                },
                allow_duplicates: o.flag("allow_duplicates", true)?,
            },
            "lowercase" | "uppercase" | "trim" => {
                let f = field(o)?;
                Processor::Text {
                    op: match o.kind {
                        "lowercase" => TextOp::Lower,
                        "uppercase" => TextOp::Upper,
                        _ => TextOp::Trim,
                    },
                    target: target_or(o, &f)?,
                    field: f,
                    ignore_missing: o.flag("ignore_missing", false)?,
                }
            }
            "convert" => parse_convert(o)?,
            "date" => parse_date(o)?,
            "fingerprint" => Processor::Fingerprint(Fingerprint {
                fields: o.strings("fields")?,
                target: o.string("target_field")?.unwrap_or_else(|| "fingerprint".into()),
                salt: o.string("salt")?.unwrap_or_default(),
                method: Method::parse(o.string("method")?.as_deref().unwrap_or("SHA-1"))?,
                ignore_missing: o.flag("ignore_missing", false)?,
            }),
            "split" => parse_split(o)?,
            "join" => {
                let f = field(o)?;
                Processor::Join {
                    target: target_or(o, &f)?,
                    field: f,
                    separator: o.required("separator")?,
                }
            }
            "gsub" => {
                let f = field(o)?;
                Processor::Gsub {
                    target: target_or(o, &f)?,
                    field: f,
                    pattern: regex(&o.required("pattern")?, "pattern")?,
                    // Java's `$1` group references read the same in the regex crate's syntax.
                    replacement: o.required("replacement")?,
                    ignore_missing: o.flag("ignore_missing", false)?,
                }
            }
            "json" => Processor::Json {
                field: field(o)?,
                target: o.string("target_field")?,
                add_to_root: o.flag("add_to_root", false)?,
            },
            "script" => parse_script(o)?,
            "drop" => Processor::Drop,
            "fail" => Processor::Fail(o.required("message")?),
            "pipeline" => Processor::Pipeline {
                name: o.required("name")?,
                ignore_missing_pipeline: o.flag("ignore_missing_pipeline", false)?,
            },
            "reroute" => {
                for key in ["dataset", "namespace"] {
                    if o.take(key).is_some() {
                        return Err(format!("[{key}] of processor [reroute] is not supported here: give [destination]"));
                    }
                }
                Processor::Reroute(o.required("destination")?)
            }
            _ => match parse_extracting(o)? {
                Some(p) => p,
                None => {
                    return Err(format!(
                        "No processor type exists with name [{}] in the embedded engine (it runs {SUPPORTED})",
                        o.kind
                    ))
                }
            },
        })
    }
}

/// The processors that read structure out of text (grok, kv, URIs, domains, addresses) and
/// `foreach`; None for a type the engine does not run.
fn parse_extracting(o: &mut Options) -> Result<Option<Processor>, String> {
    Ok(Some(match o.kind {
        "grok" => Processor::Grok(Box::new(crate::ingest::grok::Grok::parse(o)?)),
        "kv" => Processor::Kv(Box::new(crate::ingest::kv::Kv::parse(o)?)),
        "uri_parts" => Processor::UriParts(Box::new(crate::ingest::uri_parts::UriParts::parse(o)?)),
        "registered_domain" => Processor::RegisteredDomain(Box::new(
            crate::ingest::domain::RegisteredDomain::parse(o)?,
        )),
        "geoip" => parse_geoip(o)?,
        "foreach" => Processor::Foreach(Box::new(crate::ingest::Foreach::parse(o)?)),
        "set_security_user" => parse_security_user(o)?,
        "user_agent" => {
            Processor::UserAgent(Box::new(crate::ingest::user_agent::UserAgent::parse(o)?))
        }
        _ => return Ok(None),
    }))
}

/// A date processor's format: Elasticsearch's names, else a Java pattern.
fn date_format(f: &str) -> Result<DateFormats, String> {
    let ours = match f {
        "ISO8601" => "strict_date_optional_time",
        "UNIX" => "epoch_second",
        "UNIX_MS" => "epoch_millis",
        "TAI64N" => return Err("date format TAI64N is not read by the engine".into()),
        other => other,
    };
    DateFormats::parse(ours).map_err(|e| format!("date format `{f}`: {e}"))
}

/// The processor's `target_field`, else its field.
fn target_or(o: &mut Options, field: &str) -> Result<String, String> {
    Ok(o.string("target_field")?
        .unwrap_or_else(|| field.to_string()))
}

/// `set`: a value, a template (`{{field}}`) or a copy of another field.
fn parse_set(o: &mut Options) -> Result<Processor, String> {
    let field = o.required("field")?;
    let value = match (o.take("value"), o.string("copy_from")?) {
        (Some(_), Some(_)) => return Err("[copy_from] cannot be set with [value]".into()),
        (Some(Value::String(s)), None) if s.contains("{{") => SetValue::Template(s),
        (Some(v), None) => SetValue::Value(v),
        (None, Some(from)) => SetValue::CopyFrom(from),
        (None, None) => return Err("[value] required property is missing (processor [set])".into()),
    };
    Ok(Processor::Set {
        field,
        value,
        override_existing: o.flag("override", true)?,
        ignore_empty_value: o.flag("ignore_empty_value", false)?,
    })
}

/// `convert`: the types Elasticsearch converts to.
fn parse_convert(o: &mut Options) -> Result<Processor, String> {
    let f = o.required("field")?;
    let to = match o.required("type")?.as_str() {
        "integer" => ConvertTo::Integer,
        "long" => ConvertTo::Long,
        "float" => ConvertTo::Float,
        "double" => ConvertTo::Double,
        "boolean" => ConvertTo::Boolean,
        "string" => ConvertTo::String,
        "ip" => ConvertTo::Ip,
        "auto" => ConvertTo::Auto,
        other => {
            return Err(format!(
                "type [{other}] not supported, cannot convert field."
            ))
        }
    };
    Ok(Processor::Convert {
        target: target_or(o, &f)?,
        field: f,
        to,
        ignore_missing: o.flag("ignore_missing", false)?,
    })
}

/// `date`: formats as Elasticsearch reads them; UTC and English only.
fn parse_date(o: &mut Options) -> Result<Processor, String> {
    let field = o.required("field")?;
    let target = o
        .string("target_field")?
        .unwrap_or_else(|| "@timestamp".into());
    let formats = o
        .strings("formats")?
        .iter()
        .map(|f| date_format(f))
        .collect::<Result<_, _>>()?;
    match o.string("locale")? {
        Some(v) if !v.eq_ignore_ascii_case("ENGLISH") && !v.starts_with("en") => {
            return Err(format!(
                "[locale] `{v}` of processor [date]: the engine reads dates in English only"
            ))
        }
        _ => {}
    }
    let timezone = o.string("timezone")?;
    if let Some(t) = timezone.as_deref().filter(|t| !t.contains("{{")) {
        crate::zone::Zone::parse(t).map_err(|e| format!("[timezone] of processor [date]: {e}"))?;
    }
    if let Some(f) = o.string("output_format")? {
        if f != "yyyy-MM-dd'T'HH:mm:ss.SSSXXX" {
            return Err(format!("[output_format] `{f}` of processor [date]: the engine writes the default format only"));
        }
    }
    Ok(Processor::Date {
        field,
        target,
        formats,
        timezone,
    })
}

/// `geoip`: the engine has no GeoIP database, as Elasticsearch has none until its
/// downloader fetches them: each document is tagged `_geoip_database_unavailable_<file>`.
fn parse_geoip(o: &mut Options) -> Result<Processor, String> {
    o.required("field")?;
    for key in [
        "target_field",
        "properties",
        "ignore_missing",
        "first_only",
        "download_database_on_pipeline_creation",
    ] {
        o.take(key);
    }
    let database = o
        .string("database_file")?
        .unwrap_or_else(|| "GeoLite2-City.mmdb".into());
    Ok(Processor::GeoIpUnavailable(database))
}

/// `set_security_user`: its field and properties checked as Elasticsearch checks them.
fn parse_security_user(o: &mut Options) -> Result<Processor, String> {
    const PROPERTIES: [&str; 8] = [
        "username",
        "full_name",
        "email",
        "roles",
        "metadata",
        "api_key",
        "realm",
        "authentication_type",
    ];
    o.required("field")?;
    match o.take("properties") {
        None => {}
        Some(Value::Array(names)) => {
            for name in names {
                let known = name
                    .as_str()
                    .is_some_and(|n| PROPERTIES.contains(&n.to_ascii_lowercase().as_str()));
                if !known {
                    // Elasticsearch's own words, typo included.
                    return Err(format!(
                        "[properties] Property value [{}] is in valid",
                        name.as_str()
                            .map_or_else(|| name.to_string(), str::to_string)
                    ));
                }
            }
        }
        Some(other) => {
            return Err(format!(
                "[properties] property isn't a list, but of type [{other}]"
            ))
        }
    }
    Ok(Processor::NoActiveUser)
}

/// `split`: a separator pattern; `preserve_trailing` refused.
fn parse_split(o: &mut Options) -> Result<Processor, String> {
    let f = o.required("field")?;
    let separator = regex(&o.required("separator")?, "separator")?;
    if o.flag("preserve_trailing", false)? {
        return Err("[preserve_trailing] of processor [split] is not supported".into());
    }
    Ok(Processor::Split {
        target: target_or(o, &f)?,
        field: f,
        separator,
        ignore_missing: o.flag("ignore_missing", false)?,
    })
}

/// The `script` processor: its Painless (`source`, `lang`, `params`; a stored `id` is refused).
fn parse_script(o: &mut Options) -> Result<Processor, String> {
    let mut config = serde_json::Map::new();
    for key in ["source", "id", "lang", "params"] {
        if let Some(v) = o.take(key) {
            config.insert(key.to_string(), v);
        }
    }
    let script = crate::painless::Script::for_ingest(&Value::Object(config))?;
    Ok(Processor::Script(std::sync::Arc::new(script)))
}
