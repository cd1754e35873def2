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
}

pub fn parse(command: KvCommand, p: &Params) -> Result<KvSpec, ParamError> {
    if p.get("pipeline").is_some() && p.get("transaction").is_some() {
        return Err(ParamError::new("transaction", "give either `pipeline` or `transaction`, not both"));
    }
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
        pipeline: p.positive_int("pipeline")?.unwrap_or(1),
        transaction: p.positive_int("transaction")?,
        seed: p.get("seed").and_then(|v| v.as_u64()).unwrap_or(42),
    })
}
