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
                let (h1, h2) = murmur3_x64_128(bytes, 0);
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

/// MurmurHash3, x64 128-bit variant (Austin Appleby's reference), as Lucene and Elasticsearch use.
pub fn murmur3_x64_128(data: &[u8], seed: u64) -> (u64, u64) {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let (mut h1, mut h2) = (seed, seed);
    let blocks = data.chunks_exact(16);
    let tail = blocks.remainder();
    for b in blocks {
        let k1 = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        let k2 = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let (mut k1, mut k2) = (0u64, 0u64);
    for (i, &byte) in tail.iter().enumerate() {
        if i < 8 {
            k1 ^= u64::from(byte) << (8 * i);
        } else {
            k2 ^= u64::from(byte) << (8 * (i - 8));
        }
    }
    if tail.len() > 8 {
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    }
    if !tail.is_empty() {
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_matches_the_reference_vectors() {
        // MurmurHash3_x64_128 outputs (seed 0) as two little-endian halves, as PyPI's mmh3 gives.
        assert_eq!(murmur3_x64_128(b"", 0), (0, 0));
        assert_eq!(
            murmur3_x64_128(b"hello", 0),
            (0xcbd8_a7b3_41bd_9b02, 0x5b1e_906a_48ae_1d19)
        );
        assert_eq!(
            murmur3_x64_128(b"The quick brown fox jumps over the lazy dog", 0),
            (0xe34b_bc7b_bc07_1b6c, 0x7a43_3ca9_c49a_9347)
        );
        // A full 16-byte block and a tail (checked with PyPI's mmh3).
        assert_eq!(
            murmur3_x64_128(b"0123456789abcdefXYZ", 0),
            (0x99d3_7502_6c4a_901d, 0x4e69_e256_eaf8_9cf3)
        );
    }

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
