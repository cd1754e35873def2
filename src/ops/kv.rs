//! Key-value operations: get, put, delete, incr, a weighted mix of them, and a generic
//! `command` with `{key}` / `{value}` placeholders. Keys are drawn from a keyspace, uniformly
//! or zipfian; an operation is one command, a pipeline of N, or a MULTI/EXEC of N.

use super::{OpSpec, OperationType, ParamError, Params};
use crate::units::ThroughputUnit;
use serde_json::Value;
use std::sync::Arc;

const KV_SWEEPABLE: &[&str] = &[
    "keyspace",
    "key-size",
    "value-size",
    "pipeline",
    "transaction",
    "zipf-exponent",
];

const fn kv_type(
    name: &'static str,
    parse: fn(&Params, &super::TrackContext) -> Result<OpSpec, ParamError>,
) -> OperationType {
    OperationType {
        name,
        unit: ThroughputUnit::Operations,
        sweepable: KV_SWEEPABLE,
        parse,
    }
}

pub const GET: OperationType = kv_type("get", |p, _| {
    Ok(OpSpec::Kv(parse(Some(KvCommand::Get), p)?))
});
pub const PUT: OperationType = kv_type("put", |p, _| {
    Ok(OpSpec::Kv(parse(Some(KvCommand::Put), p)?))
});
pub const DELETE: OperationType = kv_type("delete", |p, _| {
    Ok(OpSpec::Kv(parse(Some(KvCommand::Delete), p)?))
});
pub const INCR: OperationType = kv_type("incr", |p, _| {
    Ok(OpSpec::Kv(parse(Some(KvCommand::Incr), p)?))
});
pub const KV_MIX: OperationType = kv_type("kv-mix", |p, _| Ok(OpSpec::Kv(parse(None, p)?)));
pub const COMMAND: OperationType = kv_type("command", |p, _| {
    Ok(OpSpec::Kv(parse(Some(KvCommand::Command), p)?))
});

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KvCommand {
    Get,
    Put,
    Delete,
    Incr,
    /// The operation's [`CustomCommand`].
    Command,
}

impl KvCommand {
    pub const ALL: [KvCommand; 5] = [
        KvCommand::Get,
        KvCommand::Put,
        KvCommand::Delete,
        KvCommand::Incr,
        KvCommand::Command,
    ];
    pub const COUNT: usize = Self::ALL.len();
    /// Each command's label, in the order of [`KvCommand::index`].
    pub const LABELS: [&'static str; Self::COUNT] = ["get", "put", "delete", "incr", "command"];
    /// What a `mix` may name.
    const MIXABLE: [KvCommand; 4] = [
        KvCommand::Get,
        KvCommand::Put,
        KvCommand::Delete,
        KvCommand::Incr,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        Self::LABELS[self.index()]
    }
}

/// How keys are picked from the keyspace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyDistribution {
    Uniform,
    /// Key k (0-based) is drawn with probability ∝ 1 / (k + 1)^exponent: key 0 is the hottest.
    Zipfian {
        exponent: f64,
    },
}

/// One argument of a custom command: literal bytes with the key and value spliced in.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgPart {
    Literal(Vec<u8>),
    Key,
    Value,
}

/// A command given as `command: "HSET h:{key} field {value}"` (or a list of arguments),
/// split into parts once so that each call only copies bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomCommand {
    pub args: Vec<Vec<ArgPart>>,
}

/// The embedded store fills a command's arguments through this, as the RESP writer does.
impl engine::ArgTemplate for CustomCommand {
    fn name(&self) -> String {
        CustomCommand::name(self)
    }
    fn arg_count(&self) -> usize {
        self.args.len()
    }
    fn write_arg(&self, i: usize, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
        CustomCommand::write_arg(self, i, key, value, out)
    }
}

impl CustomCommand {
    /// The command's name, upper-cased (`HSET`).
    pub fn name(&self) -> String {
        match self.args.first().map(Vec::as_slice) {
            Some([ArgPart::Literal(name)]) => String::from_utf8_lossy(name).to_ascii_uppercase(),
            _ => String::new(),
        }
    }

    /// Writes argument `i` for `key` and `value` into `out` (cleared first).
    pub fn write_arg(&self, i: usize, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
        out.clear();
        for part in &self.args[i] {
            match part {
                ArgPart::Literal(b) => out.extend_from_slice(b),
                ArgPart::Key => out.extend_from_slice(key),
                ArgPart::Value => out.extend_from_slice(value),
            }
        }
    }

    fn parse_arg(arg: &str) -> Result<Vec<ArgPart>, String> {
        let mut parts = Vec::new();
        let mut rest = arg;
        while let Some(open) = rest.find('{') {
            let close = rest[open..]
                .find('}')
                .map(|c| open + c)
                .ok_or_else(|| format!("`{arg}`: `{{` without a closing `}}`"))?;
            if open > 0 {
                parts.push(ArgPart::Literal(rest[..open].as_bytes().to_vec()));
            }
            parts.push(match &rest[open + 1..close] {
                "key" => ArgPart::Key,
                "value" => ArgPart::Value,
                other => {
                    return Err(format!(
                        "`{arg}`: unknown placeholder `{{{other}}}`; use {{key}} or {{value}}"
                    ))
                }
            });
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() || parts.is_empty() {
            parts.push(ArgPart::Literal(rest.as_bytes().to_vec()));
        }
        Ok(parts)
    }

    pub fn parse(v: &Value) -> Result<CustomCommand, String> {
        let words: Vec<String> = match v {
            Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
            Value::Array(items) => items
                .iter()
                .map(|i| match i {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(n) => Ok(n.to_string()),
                    other => Err(format!("arguments are strings or numbers, got {other}")),
                })
                .collect::<Result<_, _>>()?,
            other => return Err(format!("expected a command such as \"HSET h:{{key}} f {{value}}\" or a list of arguments, got {other}")),
        };
        if words.is_empty() {
            return Err("the command is empty".into());
        }
        let args = words
            .iter()
            .map(|w| Self::parse_arg(w))
            .collect::<Result<Vec<_>, _>>()?;
        if !matches!(args[0].as_slice(), [ArgPart::Literal(_)]) {
            return Err("the command's name cannot be a placeholder".into());
        }
        let command = CustomCommand { args };
        let name = command.name();
        if matches!(
            name.as_str(),
            "MULTI"
                | "EXEC"
                | "DISCARD"
                | "WATCH"
                | "SUBSCRIBE"
                | "PSUBSCRIBE"
                | "MONITOR"
                | "QUIT"
                | "RESET"
        ) {
            return Err(format!("`{name}` changes the connection's state; use the `transaction` param for MULTI/EXEC"));
        }
        Ok(command)
    }
}

#[derive(Debug, Clone)]
pub struct KvSpec {
    /// Commands and their weights; one entry with weight 1 for a single-command operation.
    pub mix: Vec<(KvCommand, u32)>,
    pub custom: Option<Arc<CustomCommand>>,
    /// Number of distinct keys.
    pub keyspace: u64,
    pub distribution: KeyDistribution,
    pub key_size: usize,
    pub value_size: usize,
    /// Commands per operation, sent together without waiting (redis-benchmark's -P); the
    /// whole pipeline counts as one operation and as `pipeline` requests.
    pub pipeline: u64,
    /// When set, the operation is one MULTI/EXEC transaction of this many commands.
    pub transaction: Option<u64>,
    pub seed: u64,
}

impl KvSpec {
    /// Keys (commands) in one operation.
    pub fn keys_per_operation(&self) -> u64 {
        self.transaction.unwrap_or(self.pipeline)
    }

    /// The single command of a non-mixed operation.
    pub fn single_command(&self) -> Option<KvCommand> {
        match self.mix.as_slice() {
            [(c, _)] => Some(*c),
            _ => None,
        }
    }

    /// What the operation sends, for reports: `SET`, `GET 10% / SET 90%`, `HSET`.
    pub fn describe(&self) -> String {
        let name = |c: KvCommand| match c {
            KvCommand::Get => "GET".to_string(),
            KvCommand::Put => "SET".to_string(),
            KvCommand::Delete => "DEL".to_string(),
            KvCommand::Incr => "INCR".to_string(),
            KvCommand::Command => self.custom.as_ref().map(|c| c.name()).unwrap_or_default(),
        };
        let total: u32 = self.mix.iter().map(|(_, w)| w).sum();
        let body = match self.mix.as_slice() {
            [(c, _)] => name(*c),
            mix => mix
                .iter()
                .map(|(c, w)| {
                    let pct = f64::from(*w) * 100.0 / f64::from(total);
                    if pct.fract() == 0.0 {
                        format!("{} {pct:.0}%", name(*c))
                    } else {
                        format!("{} {pct:.1}%", name(*c))
                    }
                })
                .collect::<Vec<_>>()
                .join(" / "),
        };
        match self.transaction {
            Some(n) => format!("MULTI {body} ×{n} EXEC"),
            None => body,
        }
    }
}

/// What a key-value task sends, as stored with its results and shown in its reports.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KvInfo {
    /// `SET`, `GET 10% / SET 90%`, `MULTI SET ×10 EXEC`, `HSET`.
    pub commands: String,
    pub keyspace: u64,
    /// `uniform` or `zipfian(0.99)`.
    pub key_distribution: String,
    pub key_size: u64,
    pub value_size: u64,
    /// Commands per operation (pipeline depth or transaction size).
    pub commands_per_operation: u64,
    pub transaction: bool,
}

impl KvInfo {
    pub fn of(spec: &KvSpec) -> KvInfo {
        KvInfo {
            commands: spec.describe(),
            keyspace: spec.keyspace,
            key_distribution: match spec.distribution {
                KeyDistribution::Uniform => "uniform".into(),
                KeyDistribution::Zipfian { exponent } => format!("zipfian({exponent})"),
            },
            key_size: spec.key_size as u64,
            value_size: spec.value_size as u64,
            commands_per_operation: spec.keys_per_operation(),
            transaction: spec.transaction.is_some(),
        }
    }
}

fn parse_mix(p: &Params) -> Result<Vec<(KvCommand, u32)>, ParamError> {
    let Some(v) = p.get("mix") else {
        return Err(ParamError::new(
            "mix",
            "`kv-mix` needs a `mix`, e.g. mix: {get: 10, put: 90}",
        ));
    };
    let Value::Object(map) = v else {
        return Err(ParamError::new(
            "mix",
            format!("expected weights by command such as {{get: 10, put: 90}}, got {v}"),
        ));
    };
    let mut mix = Vec::new();
    for (name, weight) in map {
        let command = KvCommand::MIXABLE.iter().copied().find(|c| c.as_str() == name).ok_or_else(|| {
            let hint = crate::suggest::did_you_mean(name, KvCommand::MIXABLE.iter().map(|c| c.as_str()));
            ParamError::new("mix", format!("unknown command `{name}` in the mix{hint}; it may hold get, put, delete and incr"))
        })?;
        let weight = weight
            .as_u64()
            .filter(|w| *w <= u64::from(u32::MAX))
            .ok_or_else(|| {
                ParamError::new(
                    "mix",
                    format!("the weight of `{name}` must be a whole number ≥ 0, got {weight}"),
                )
            })?;
        if weight > 0 {
            mix.push((command, weight as u32));
        }
    }
    if mix.is_empty() {
        return Err(ParamError::new(
            "mix",
            "the mix needs at least one command with a weight above 0",
        ));
    }
    Ok(mix)
}

fn parse_distribution(p: &Params) -> Result<KeyDistribution, ParamError> {
    let exponent = match p.get("zipf-exponent") {
        None => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|e| *e > 0.0 && e.is_finite())
                .ok_or_else(|| {
                    ParamError::new(
                        "zipf-exponent",
                        format!("expected a number above 0, got {v}"),
                    )
                })?,
        ),
    };
    match p.string("key-distribution")?.as_deref() {
        None | Some("uniform") if exponent.is_none() => Ok(KeyDistribution::Uniform),
        None | Some("uniform") => Err(ParamError::new(
            "zipf-exponent",
            "`zipf-exponent` needs key-distribution: zipfian",
        )),
        // YCSB's default skew.
        Some("zipfian") => Ok(KeyDistribution::Zipfian {
            exponent: exponent.unwrap_or(0.99),
        }),
        Some(other) => {
            let hint = crate::suggest::did_you_mean(other, ["uniform", "zipfian"].into_iter());
            Err(ParamError::new(
                "key-distribution",
                format!("unknown key distribution `{other}`{hint}; use uniform or zipfian"),
            ))
        }
    }
}

/// Parses `get`, `put`, `delete`, `incr` (`command` given), `kv-mix` (`command` None, reads
/// `mix`) and `command` (`command` Some(Command), reads the `command` param).
pub fn parse(command: Option<KvCommand>, p: &Params) -> Result<KvSpec, ParamError> {
    if p.get("pipeline").is_some() && p.get("transaction").is_some() {
        return Err(ParamError::new(
            "transaction",
            "give either `pipeline` or `transaction`, not both",
        ));
    }
    let mix = match command {
        Some(c) => vec![(c, 1)],
        None => parse_mix(p)?,
    };
    let custom = match command {
        Some(KvCommand::Command) => {
            let v = p.get("command").ok_or_else(|| {
                ParamError::new(
                    "command",
                    "`command` needs a `command`, e.g. command: \"HSET h:{key} f {value}\"",
                )
            })?;
            Some(Arc::new(
                CustomCommand::parse(v).map_err(|m| ParamError::new("command", m))?,
            ))
        }
        _ => None,
    };
    let key_size = p.positive_int("key-size")?.unwrap_or(16) as usize;
    if key_size < 8 {
        return Err(ParamError::new(
            "key-size",
            "keys need at least 8 bytes to hold their number",
        ));
    }
    let keyspace = p.positive_int("keyspace")?.unwrap_or(100_000);
    let digits = (keyspace - 1).max(1).ilog10() as usize + 1;
    if digits + 1 > key_size {
        return Err(ParamError::new(
            "key-size",
            format!(
                "{key_size} bytes cannot hold {keyspace} distinct keys; use key-size {} or more",
                digits + 1
            ),
        ));
    }
    Ok(KvSpec {
        mix,
        custom,
        keyspace,
        distribution: parse_distribution(p)?,
        key_size,
        value_size: p.positive_int("value-size")?.unwrap_or(16) as usize,
        pipeline: p.positive_int("pipeline")?.unwrap_or(1),
        transaction: p.positive_int("transaction")?,
        seed: p.get("seed").and_then(|v| v.as_u64()).unwrap_or(42),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn custom_commands_split_placeholders() {
        let c = CustomCommand::parse(&json!("hset h:{key}:x f {value}")).unwrap();
        assert_eq!(c.name(), "HSET");
        let mut out = Vec::new();
        c.write_arg(1, b"k001", b"v", &mut out);
        assert_eq!(out, b"h:k001:x");
        c.write_arg(3, b"k001", b"v", &mut out);
        assert_eq!(out, b"v");
        let list = CustomCommand::parse(&json!(["SET", "{key}", "a b"])).unwrap();
        list.write_arg(2, b"k", b"v", &mut out);
        assert_eq!(out, b"a b");
    }

    #[test]
    fn custom_commands_reject_what_cannot_work() {
        for (v, needle) in [
            (json!(""), "empty"),
            (json!("GET {ky}"), "unknown placeholder `{ky}`"),
            (json!("GET {key"), "without a closing"),
            (json!("{key} x"), "name cannot be a placeholder"),
            (json!("multi"), "transaction"),
            (json!(7), "expected a command"),
        ] {
            let e = CustomCommand::parse(&v).unwrap_err();
            assert!(e.contains(needle), "{v}: {e}");
        }
    }

    #[test]
    fn mixes_and_distributions_parse() {
        let map =
            json!({"mix": {"get": 10, "put": 90, "delete": 0}, "key-distribution": "zipfian"});
        let p = Params::new("kv-mix", map.as_object().unwrap());
        let spec = parse(None, &p).unwrap();
        assert_eq!(spec.mix, vec![(KvCommand::Get, 10), (KvCommand::Put, 90)]);
        assert_eq!(
            spec.distribution,
            KeyDistribution::Zipfian { exponent: 0.99 }
        );
        assert_eq!(spec.describe(), "GET 10% / SET 90%");
        let bad = json!({"mix": {"gett": 1}});
        let e = parse(None, &Params::new("kv-mix", bad.as_object().unwrap())).unwrap_err();
        assert!(e.message.contains("did you mean `get`"), "{}", e.message);
        let bad = json!({"key-distribution": "zipf"});
        let e = parse(
            Some(KvCommand::Get),
            &Params::new("get", bad.as_object().unwrap()),
        )
        .unwrap_err();
        assert!(e.message.contains("zipfian"), "{}", e.message);
    }
}
