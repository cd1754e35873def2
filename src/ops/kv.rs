//! get, put and delete against a key-value store: keys drawn at random from a keyspace.

use super::{ParamError, Params};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KvCommand {
    Get,
    Put,
    Delete,
}

#[derive(Debug, Clone)]
pub struct KvSpec {
    pub command: KvCommand,
    /// Number of distinct keys; each operation picks one uniformly at random.
    pub keyspace: u64,
    pub key_size: usize,
    pub value_size: usize,
    /// Keys per operation (a batched get or put counts as one operation).
    pub batch: u64,
    pub seed: u64,
}

pub fn parse(command: KvCommand, p: &Params) -> Result<KvSpec, ParamError> {
    let key_size = p.positive_int("key-size")?.unwrap_or(16) as usize;
    if key_size < 8 {
        return Err(ParamError::new("key-size", "keys need at least 8 bytes to hold their number"));
    }
    let keyspace = p.positive_int("keyspace")?.unwrap_or(100_000);
    let digits = (keyspace - 1).max(1).ilog10() as usize + 1;
    if digits + 1 > key_size {
        return Err(ParamError::new("key-size", format!("{key_size} bytes cannot hold {keyspace} distinct keys; use key-size {} or more", digits + 1)));
    }
    Ok(KvSpec {
        command,
        keyspace,
        key_size,
        value_size: p.positive_int("value-size")?.unwrap_or(16) as usize,
        batch: p.positive_int("batch")?.unwrap_or(1),
        seed: p.get("seed").and_then(|v| v.as_u64()).unwrap_or(42),
    })
}
