//! Scaling a real corpus up (`scale-to: N` on a source file): the file's own documents first,
//! then new ones recombined from them, streamed, so that geonames can be indexed at Rally's
//! 11,396,503 documents from its 234,908 real places with no file of that size.
//!
//! New document `n` takes a base document and a donor, both chosen by a hash of (seed, n): a new
//! `geonameid` (past the largest real one), a `name` of the base's first word and the donor's last,
//! `alternatenames` of the first half of the base's and the second half of the donor's, the base's
//! `location` jittered by up to ±0.05°, and every other field of the base unchanged. Fields a
//! document lacks are not made up. Document `n` depends only on (seed, n).

use super::{CorpusError, CorpusReader, DocumentSet};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// How far a new document's location may move from its base's, in degrees.
const JITTER_DEGREES: f64 = 0.05;

/// The most text a base file may decompress to: twice geonames' 62 MB. A base is held in
/// memory, so a small compressed file that expands without end must stop here.
pub const MAX_BASE_BYTES: usize = 128 << 20;

/// One base document, split into what recombination changes and the JSON of the rest.
struct BaseDoc {
    id: Option<u64>,
    name: Option<String>,
    alternates: Option<String>,
    location: Option<(f64, f64)>,
    /// The other fields as `"k":v,"k2":v2` (no braces), written back verbatim.
    rest: String,
}

pub struct ScaleBase {
    docs: Vec<BaseDoc>,
    next_id: u64,
}

impl ScaleBase {
    /// Reads every document of `path` (once per process: later trials share it).
    pub fn load(path: &Path) -> Result<Arc<ScaleBase>, CorpusError> {
        static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<ScaleBase>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(base) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(path) {
            return Ok(base.clone());
        }
        let set = DocumentSet::file(path, "");
        let mut reader = CorpusReader::open(vec![set], None)?;
        let (mut docs, mut buf, mut max_id) = (Vec::new(), String::new(), 0u64);
        let mut held = 0usize;
        loop {
            buf.clear();
            if reader.fill(&mut buf, 10_000, None)? == 0 {
                break;
            }
            held += buf.len();
            if held > MAX_BASE_BYTES {
                return Err(CorpusError::ScaleBaseTooLarge {
                    path: path.to_path_buf(),
                    line: docs.len() as u64 + 1,
                });
            }
            for line in buf.lines() {
                let doc = split(line).ok_or_else(|| CorpusError::NotJson {
                    path: path.to_path_buf(),
                    line: docs.len() as u64 + 1,
                })?;
                max_id = max_id.max(doc.id.unwrap_or(0));
                docs.push(doc);
            }
        }
        if docs.is_empty() {
            return Err(CorpusError::Empty {
                path: path.to_path_buf(),
            });
        }
        let base = Arc::new(ScaleBase {
            docs,
            next_id: max_id + 1,
        });
        cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.to_path_buf(), base.clone());
        Ok(base)
    }

    pub fn len(&self) -> u64 {
        self.docs.len() as u64
    }

    /// Appends document `n` (with its newline): the base's own for `n` below its size.
    pub fn write(&self, seed: u64, n: u64, buf: &mut String) {
        let len = self.len();
        if n < len {
            let d = &self.docs[n as usize];
            write_doc(
                buf,
                d.id,
                d.name.as_deref(),
                d.alternates.as_deref(),
                d.location,
                &d.rest,
            );
            return;
        }
        let h = mix(seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let base = &self.docs[(h % len) as usize];
        let donor = &self.docs[((h >> 24) % len) as usize];
        let name_buf;
        let name = match (&base.name, &donor.name) {
            (Some(b), Some(d)) => {
                let first = b.split(' ').next().unwrap_or(b);
                let last = d.rsplit(' ').next().unwrap_or(d);
                name_buf = if first == last {
                    b.clone()
                } else {
                    format!("{first} {last}")
                };
                Some(name_buf.as_str())
            }
            (b, _) => b.as_deref(),
        };
        let alt_buf;
        let alternates = match (&base.alternates, &donor.alternates) {
            (Some(b), Some(d)) if !b.is_empty() || !d.is_empty() => {
                let bs: Vec<&str> = b.split(',').filter(|s| !s.is_empty()).collect();
                let ds: Vec<&str> = d.split(',').filter(|s| !s.is_empty()).collect();
                let mut parts: Vec<&str> = bs[..bs.len().div_ceil(2)].to_vec();
                parts.extend_from_slice(&ds[ds.len() / 2..]);
                alt_buf = parts.join(",");
                Some(alt_buf.as_str())
            }
            (b, _) => b.as_deref(),
        };
        let jitter = |bits: u64| ((bits & 0xFFFF) as f64 / 65535.0 * 2.0 - 1.0) * JITTER_DEGREES;
        let h2 = mix(h);
        let location = base.location.map(|(lon, lat)| {
            (
                (lon + jitter(h2)).clamp(-180.0, 180.0),
                (lat + jitter(h2 >> 16)).clamp(-90.0, 90.0),
            )
        });
        let id = base.id.map(|_| self.next_id + (n - len));
        write_doc(buf, id, name, alternates, location, &base.rest);
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn split(line: &str) -> Option<BaseDoc> {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(line.trim()) else {
        return None;
    };
    let mut doc = BaseDoc {
        id: None,
        name: None,
        alternates: None,
        location: None,
        rest: String::new(),
    };
    for (k, v) in map {
        match (k.as_str(), &v) {
            ("geonameid", Value::Number(n)) if n.is_u64() => doc.id = n.as_u64(),
            ("name", Value::String(s)) => doc.name = Some(s.clone()),
            ("alternatenames", Value::String(s)) => doc.alternates = Some(s.clone()),
            ("location", Value::Array(a)) if a.len() == 2 && a.iter().all(Value::is_f64) => {
                doc.location = Some((a[0].as_f64()?, a[1].as_f64()?));
            }
            _ => {
                if !doc.rest.is_empty() {
                    doc.rest.push(',');
                }
                doc.rest.push_str(&Value::String(k).to_string());
                doc.rest.push(':');
                doc.rest.push_str(&v.to_string());
            }
        }
    }
    Some(doc)
}

fn write_doc(
    buf: &mut String,
    id: Option<u64>,
    name: Option<&str>,
    alternates: Option<&str>,
    location: Option<(f64, f64)>,
    rest: &str,
) {
    let start = buf.len();
    buf.push('{');
    let field = |buf: &mut String, key: &str| {
        if buf.len() > start + 1 {
            buf.push(',');
        }
        buf.push('"');
        buf.push_str(key);
        buf.push_str("\":");
    };
    if let Some(id) = id {
        field(buf, "geonameid");
        let _ = write!(buf, "{id}");
    }
    if let Some(name) = name {
        field(buf, "name");
        push_json_string(buf, name);
    }
    if let Some(alternates) = alternates {
        field(buf, "alternatenames");
        push_json_string(buf, alternates);
    }
    if !rest.is_empty() {
        if buf.len() > start + 1 {
            buf.push(',');
        }
        buf.push_str(rest);
    }
    if let Some((lon, lat)) = location {
        field(buf, "location");
        let _ = write!(buf, "[{lon:.5},{lat:.5}]");
    }
    buf.push_str("}\n");
}

fn push_json_string(buf: &mut String, s: &str) {
    buf.push('"');
    for c in s.chars() {
        match c {
            '"' => buf.push_str("\\\""),
            '\\' => buf.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(buf, "\\u{:04x}", c as u32);
            }
            c => buf.push(c),
        }
    }
    buf.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(lines: &str) -> (tempfile::TempDir, Arc<ScaleBase>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("base.json");
        std::fs::write(&path, lines).unwrap();
        let b = ScaleBase::load(&path).unwrap();
        (dir, b)
    }

    const PLACES: &str = r#"{"geonameid":10,"name":"Sankt Georgen","alternatenames":"a,b,c,d","feature_class":"P","population":500,"location":[14.5,47.25]}
{"geonameid":42,"name":"Bad \"Ischl\"","alternatenames":"","feature_class":"P","population":13000,"location":[13.6,47.7]}
"#;

    #[test]
    fn the_base_comes_first_then_recombined_documents_with_new_ids() {
        let (_d, b) = base(PLACES);
        let mut buf = String::new();
        for n in 0..1000 {
            b.write(3, n, &mut buf);
        }
        let docs: Vec<Value> = buf
            .lines()
            .map(|l| serde_json::from_str(l).expect(l))
            .collect();
        assert_eq!(docs[0]["name"], "Sankt Georgen");
        assert_eq!(docs[1]["name"], "Bad \"Ischl\"");
        assert_eq!(docs[0]["location"], serde_json::json!([14.5, 47.25]));
        let ids: std::collections::HashSet<u64> = docs
            .iter()
            .map(|d| d["geonameid"].as_u64().unwrap())
            .collect();
        assert_eq!(ids.len(), 1000, "every id is new");
        assert!(docs[2..]
            .iter()
            .all(|d| d["geonameid"].as_u64().unwrap() > 42));
        for d in &docs[2..] {
            let name = d["name"].as_str().unwrap();
            assert!(
                [
                    "Sankt Georgen",
                    "Sankt \"Ischl\"",
                    "Bad Georgen",
                    "Bad \"Ischl\""
                ]
                .contains(&name),
                "{name}"
            );
            let (lon, lat) = (
                d["location"][0].as_f64().unwrap(),
                d["location"][1].as_f64().unwrap(),
            );
            assert!(
                (lon - 14.5).abs() <= 0.05 + 1e-9 || (lon - 13.6).abs() <= 0.05 + 1e-9,
                "{lon}"
            );
            assert!(
                (lat - 47.25).abs() <= 0.05 + 1e-9 || (lat - 47.7).abs() <= 0.05 + 1e-9,
                "{lat}"
            );
            assert_eq!(d["feature_class"], "P");
        }
        let names: std::collections::HashSet<&str> = docs[2..]
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 4, "names are recombined: {names:?}");
        let mut again = String::new();
        b.write(3, 777, &mut again);
        assert_eq!(
            again,
            format!("{}\n", buf.lines().nth(777).unwrap()),
            "document n depends only on (seed, n)"
        );
    }
}
