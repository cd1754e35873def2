//! Builds the built-in tracks into the binary: `tracks/` becomes a table of files that the
//! runner writes out once per version (see `src/track/builtin.rs`), so that an installed or
//! copied binary races `--track geonames` from any directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tracks");
    println!("cargo:rerun-if-changed=tracks");
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    let mut table = String::from("/// The built-in tracks' files: path under tracks/, contents.\npub static FILES: &[(&str, &[u8])] = &[\n");
    // FNV-1a over paths and contents: names the folder the files are written to.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for rel in &files {
        let path = root.join(rel);
        println!("cargo:rerun-if-changed={}", path.display());
        let bytes = std::fs::read(&path).unwrap();
        for b in rel.as_bytes().iter().chain(bytes.iter()) {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x100_0000_01b3);
        }
        writeln!(
            table,
            "    ({rel:?}, include_bytes!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    table.push_str("];\n");
    writeln!(
        table,
        "/// A digest of the files above.\npub const DIGEST: &str = \"{hash:016x}\";"
    )
    .unwrap();
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("builtin_tracks.rs");
    std::fs::write(out, table).unwrap();
}

/// Every file below `dir`, as a path relative to `root` with `/` separators.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            println!("cargo:rerun-if-changed={}", p.display());
            walk(root, &p, out);
        } else if p.is_file() {
            let rel = p.strip_prefix(root).unwrap();
            out.push(
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/"),
            );
        }
    }
}
