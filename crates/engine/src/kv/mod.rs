//! The embedded key-value store: a sharded in-memory hash map, safe for many clients at once.

mod command;

pub use command::{ArgTemplate, Found, StoreCommand};

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::RwLock;

const SHARDS: usize = 64;

pub struct KvStore {
    shards: Vec<RwLock<HashMap<Box<[u8]>, Box<[u8]>>>>,
    hasher: RandomState,
}

impl Default for KvStore {
    fn default() -> Self {
        KvStore {
            shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(),
            hasher: RandomState::new(),
        }
    }
}

impl KvStore {
    fn shard(&self, key: &[u8]) -> &RwLock<HashMap<Box<[u8]>, Box<[u8]>>> {
        &self.shards[(self.hasher.hash_one(key) as usize) % SHARDS]
    }

    /// Returns the value's length, if the key exists.
    pub fn get(&self, key: &[u8]) -> Option<usize> {
        let shard = self.shard(key).read().unwrap_or_else(|p| p.into_inner());
        shard.get(key).map(|v| v.len())
    }

    pub fn put(&self, key: &[u8], value: &[u8]) {
        let mut shard = self.shard(key).write().unwrap_or_else(|p| p.into_inner());
        match shard.get_mut(key) {
            Some(existing) if existing.len() == value.len() => existing.copy_from_slice(value),
            _ => {
                shard.insert(key.into(), value.into());
            }
        }
    }

    /// Adds `by` to the integer held at `key` (0 when missing), as Redis's INCRBY does.
    pub fn incr(&self, key: &[u8], by: i64) -> Result<i64, &'static str> {
        let mut shard = self.shard(key).write().unwrap_or_else(|p| p.into_inner());
        let current = match shard.get(key) {
            None => 0,
            Some(v) => std::str::from_utf8(v)
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or("ERR value is not an integer or out of range")?,
        };
        let next = current
            .checked_add(by)
            .ok_or("ERR increment or decrement would overflow")?;
        let mut buf = itoa::Buffer::new();
        let text = buf.format(next).as_bytes();
        let len = text.len();
        match shard.get_mut(key) {
            Some(existing) if existing.len() == len => existing.copy_from_slice(text),
            _ => {
                shard.insert(key.into(), text.into());
            }
        }
        Ok(next)
    }

    pub fn delete(&self, key: &[u8]) -> bool {
        let mut shard = self.shard(key).write().unwrap_or_else(|p| p.into_inner());
        shard.remove(key).is_some()
    }

    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.read().unwrap_or_else(|p| p.into_inner()).len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_get_delete() {
        let kv = KvStore::default();
        assert_eq!(kv.get(b"k"), None);
        kv.put(b"k", b"value");
        kv.put(b"k", b"other");
        assert_eq!(kv.get(b"k"), Some(5));
        assert_eq!(kv.len(), 1);
        assert!(kv.delete(b"k"));
        assert!(kv.is_empty());
        assert_eq!(kv.incr(b"n", 1), Ok(1));
        assert_eq!(kv.incr(b"n", 41), Ok(42));
        assert_eq!(kv.incr(b"n", -50), Ok(-8));
        assert_eq!(kv.get(b"n"), Some(2));
        kv.put(b"s", b"abc");
        assert!(kv.incr(b"s", 1).unwrap_err().contains("not an integer"));
    }
}
