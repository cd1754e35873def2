//! The `fingerprint` processor: a salted hash of some fields, base64-encoded, as Elasticsearch
//! computes one to make ids (tsdb's `doc_id_gen`). The bytes hashed are the fields in name order,
//! each as `name=JSON|`: the same field values give the same fingerprint, and different ones
//! differ, as in Elasticsearch, though the value itself is not byte-equal to Elasticsearch's.

use crate::ingest::doc::IngestDoc;
use base64::Engine;
use serde_json::Value;

pub struct Fingerprint {
    pub fields: Vec<String>,
    pub target: String,
    pub salt: String,
    pub method: Method,
    pub ignore_missing: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    Sha1,
    Sha256,
    Sha512,
    Murmur3,
}

impl Method {
    pub fn parse(name: &str) -> Result<Method, String> {
        Ok(match name {
            "SHA-1" => Method::Sha1,
            "SHA-256" => Method::Sha256,
            "SHA-512" => Method::Sha512,
            "MurmurHash3" => Method::Murmur3,
            "MD5" => return Err("fingerprint method MD5 is not built into the engine (it has SHA-1, SHA-256, SHA-512 and MurmurHash3)".into()),
            other => return Err(format!("[method] `{other}` of processor [fingerprint] must be one of MD5, SHA-1, SHA-256, SHA-512, MurmurHash3")),
        })
    }

    fn digest(self, bytes: &[u8]) -> Vec<u8> {
        use ring::digest;
        match self {
            Method::Sha1 => digest::digest(&digest::SHA1_FOR_LEGACY_USE_ONLY, bytes)
                .as_ref()
                .to_vec(),
            Method::Sha256 => digest::digest(&digest::SHA256, bytes).as_ref().to_vec(),
            Method::Sha512 => digest::digest(&digest::SHA512, bytes).as_ref().to_vec(),
            Method::Murmur3 => {
                let (h1, h2) = crate::murmur3::x64_128(bytes, 0);
                [h1.to_le_bytes(), h2.to_le_bytes()].concat()
            }
        }
    }
}

impl Fingerprint {
    pub fn run(&self, doc: &mut IngestDoc) -> Result<(), String> {
        let mut names: Vec<&str> = self.fields.iter().map(String::as_str).collect();
        names.sort_unstable();
        let mut input = self.salt.clone().into_bytes();
        let mut found = 0;
        for name in names {
            match doc.get(name) {
                Some(v) => {
                    found += 1;
                    input.extend_from_slice(name.as_bytes());
                    input.push(b'=');
                    input.extend_from_slice(v.to_string().as_bytes());
                    input.push(b'|');
                }
                None if self.ignore_missing => {}
                None => {
                    return Err(format!(
                        "field [{name}] not present as part of path [{name}]"
                    ))
                }
            }
        }
        if found == 0 {
            // Every field missing, with ignore_missing: the document is left as it is.
            return Ok(());
        }
        let hash = base64::engine::general_purpose::STANDARD.encode(self.method.digest(&input));
        doc.set(&self.target, Value::String(hash))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_fields_give_the_same_fingerprint_and_others_another() {
        let run = |v: Value, salt: &str| {
            let mut d = crate::ingest::doc::doc(v);
            Fingerprint {
                fields: vec!["b".into(), "a".into(), "gone".into()],
                target: "_id".into(),
                salt: salt.into(),
                method: Method::Murmur3,
                ignore_missing: true,
            }
            .run(&mut d)
            .unwrap();
            d.id
        };
        let one = run(serde_json::json!({"a": 1, "b": "x", "c": 5}), "17");
        assert_eq!(
            one,
            run(serde_json::json!({"b": "x", "a": 1, "c": 6}), "17")
        );
        assert_ne!(one, run(serde_json::json!({"a": 2, "b": "x"}), "17"));
        assert_ne!(one, run(serde_json::json!({"a": 1, "b": "x"}), "18"));
        // 16 bytes, base64.
        assert_eq!(one.as_ref().map(String::len), Some(24));
        assert_eq!(run(serde_json::json!({"c": 1}), "17"), None);
    }
}
