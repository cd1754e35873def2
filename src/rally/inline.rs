//! Rally's includes, as Rally assembles them: before rendering, each
//! `{{ rally.collect(parts="GLOB") }}` written out in a file is replaced by the text of the
//! files the glob matches (joined with `,\n`), the glob taken from that file's folder and the
//! parts' own collects from the glob's folder (Rally's `TemplateSource.replace_includes`; OSB's
//! `benchmark.collect` alike). The track is then one template: a top-level `{% set %}` is seen
//! by every part, and `../../common_operations` reaches OSB's shared folder. A line map keeps
//! errors pointing at the file and line the user wrote.

use super::{files_below, glob_match};
use std::path::{Component, Path, PathBuf};

/// Included parts nest at most this deep (a part that collects itself is a loop).
const MAX_DEPTH: usize = 16;
/// The assembled template is bounded as the rendered track is.
const MAX_ASSEMBLED_BYTES: usize = 16 * 1024 * 1024;

/// One template made of a file and the parts it collects.
#[derive(Debug)]
pub struct Assembled {
    pub text: String,
    /// For each line of `text`: the file (an index into `files`) and its line there.
    lines: Vec<(usize, usize)>,
    files: Vec<PathBuf>,
    /// Collects whose glob matched no file (`file:line: collect(parts="…")`): they render
    /// nothing, as in Rally and OSB, and a later error names them.
    pub empty_globs: Vec<String>,
}

impl Assembled {
    /// The file and line (1-based) that line `line` of the assembled text came from.
    pub fn origin(&self, line: usize) -> Option<(&Path, usize)> {
        let (file, at) = *self.lines.get(line.checked_sub(1)?)?;
        Some((self.files[file].as_path(), at))
    }

    /// Moves an error located in the assembled text to the part and line it came from.
    pub fn locate(&self, mut e: crate::track::TrackError, main: &Path) -> crate::track::TrackError {
        if e.file != main {
            return e;
        }
        let Some((line, column)) = e.location else {
            return e;
        };
        if let Some((file, at)) = self.origin(line) {
            if file != main {
                let name = main.file_name().map(|n| n.to_string_lossy().into_owned());
                e.message.push_str(&format!(
                    " (in a part collected by {})",
                    name.unwrap_or_default()
                ));
                e.file = file.to_path_buf();
            }
            e.location = Some((at, column));
        }
        e
    }
}

/// Assembles `file` (whose text is `text`) with every part it collects.
pub fn assemble(file: &Path, text: &str) -> Result<Assembled, String> {
    let mut b = Builder {
        out: Assembled {
            text: String::with_capacity(text.len()),
            lines: Vec::new(),
            files: Vec::new(),
            empty_globs: Vec::new(),
        },
        chain: Vec::new(),
    };
    let base = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    b.add_file(file, text, &base)?;
    Ok(b.out)
}

struct Builder {
    out: Assembled,
    /// The files being assembled, outermost first: a loop is refused by name.
    chain: Vec<PathBuf>,
}

impl Builder {
    fn file_index(&mut self, path: &Path) -> usize {
        match self.out.files.iter().position(|f| f == path) {
            Some(i) => i,
            None => {
                self.out.files.push(path.to_path_buf());
                self.out.files.len() - 1
            }
        }
    }

    /// Copies `chunk` of file `file`, whose first line is that file's line `line`.
    fn push_text(&mut self, file: usize, line: usize, chunk: &str) -> Result<(), String> {
        if self.out.text.len() + chunk.len() > MAX_ASSEMBLED_BYTES {
            return Err("the track and the parts it collects are larger than 16 MB".into());
        }
        if self.out.lines.is_empty() {
            self.out.lines.push((file, line));
        }
        for (i, piece) in chunk.split('\n').enumerate() {
            if i > 0 {
                self.out.text.push('\n');
                self.out.lines.push((file, line + i));
            }
            self.out.text.push_str(piece);
        }
        Ok(())
    }

    fn add_file(&mut self, path: &Path, text: &str, base: &Path) -> Result<(), String> {
        if self.chain.len() >= MAX_DEPTH {
            return Err(format!(
                "collected parts nest deeper than {MAX_DEPTH} (at {})",
                path.display()
            ));
        }
        if self.chain.iter().any(|p| p == path) {
            return Err(format!("{} collects itself", path.display()));
        }
        self.chain.push(path.to_path_buf());
        let idx = self.file_index(path);
        // The line where this part starts is attributed to it.
        match self.out.lines.last_mut() {
            Some(last) => *last = (idx, 1),
            None => self.out.lines.push((idx, 1)),
        }
        let mut line = 1;
        let mut rest = text;
        while let Some((before, pattern, after)) = next_collect(rest) {
            self.push_text(idx, line, before)?;
            line += before.matches('\n').count();
            let (dir, parts) = glob(base, pattern)?;
            if parts.is_empty() {
                self.out.empty_globs.push(format!(
                    "{}:{line}: collect(parts=\"{pattern}\") matched no file in {}",
                    path.display(),
                    dir.display()
                ));
            }
            for (k, part) in parts.iter().enumerate() {
                if k > 0 {
                    let next = self.file_index(part);
                    self.push_text(next, 0, ",\n")?;
                }
                let text = crate::files::read_text(part)
                    .map_err(|e| format!("cannot read {}: {e}", part.display()))?;
                self.add_file(part, &text, &dir)?;
            }
            // A line shared by a part's end and the text after it stays the part's: the
            // part is where an error on it most likely is.
            rest = after;
        }
        self.push_text(idx, line, rest)?;
        self.chain.pop();
        Ok(())
    }
}

/// The next `{{ rally.collect(parts="…") }}` (or `benchmark.collect`) in `text`: the text
/// before it, the glob, and the text after it.
fn next_collect(text: &str) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| i + from) {
        from = open + 2;
        let inner = text[from..].trim_start_matches([' ', '-']);
        let Some(call) = ["rally.collect(parts=\"", "benchmark.collect(parts=\""]
            .iter()
            .find_map(|p| inner.strip_prefix(p))
        else {
            continue;
        };
        let Some(end) = call.find('"') else {
            continue;
        };
        let pattern = &call[..end];
        let Some(tail) = call[end + 1..].strip_prefix(')') else {
            continue;
        };
        let tail = tail.trim_start_matches([' ', '-']);
        let Some(after) = tail.strip_prefix("}}") else {
            continue;
        };
        return Some((&text[..open], pattern, after));
    }
    None
}

/// The files `pattern` matches from `base`, sorted, and the folder the glob names (which the
/// parts' own collects start from). `..` may leave the track's folder, as in Rally.
fn glob(base: &Path, pattern: &str) -> Result<(PathBuf, Vec<PathBuf>), String> {
    let segments: Vec<&str> = pattern
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let literal = segments
        .iter()
        .take_while(|s| !s.contains(['*', '?', '[']))
        .count();
    let mut dir = base.to_path_buf();
    let fixed = if literal == segments.len() {
        literal.saturating_sub(1)
    } else {
        literal
    };
    for s in &segments[..fixed] {
        dir = join_lexically(&dir, s);
    }
    let rest = segments[fixed..].join("/");
    if rest.is_empty() {
        return Err(format!("collect(parts=\"{pattern}\") names no file"));
    }
    let mut found: Vec<PathBuf> = files_below(&dir)
        .into_iter()
        .filter(|f| glob_match(&rest, f))
        .map(|f| dir.join(f))
        .collect();
    found.sort();
    // Rally's base for the parts' own collects is the folder of the glob.
    let part_base = match rest.rfind('/') {
        Some(i) if !rest[..i].contains(['*', '?', '[']) => dir.join(&rest[..i]),
        _ => dir.clone(),
    };
    Ok((part_base, found))
}

fn join_lexically(dir: &Path, segment: &str) -> PathBuf {
    if segment != ".." {
        return dir.join(segment);
    }
    match dir.components().next_back() {
        Some(Component::Normal(_)) => match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        },
        _ => dir.join(".."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in list {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn parts_are_inlined_relative_to_their_folder_with_a_line_map() {
        let d = files(&[
            (
                "w/track.json",
                "{\n \"ops\": [{{ rally.collect(parts=\"ops/*.json\") }}],\n \"x\": 1\n}",
            ),
            (
                "w/ops/a.json",
                "{\"a\": 1},\n{{ benchmark.collect(parts=\"../../common/*.json\") }}",
            ),
            ("w/ops/b.json", "{\"b\":\n 2}"),
            ("common/c.json", "{\"c\": 3}"),
        ]);
        let main = d.path().join("w/track.json");
        let text = std::fs::read_to_string(&main).unwrap();
        let a = assemble(&main, &text).unwrap();
        assert_eq!(
            a.text,
            "{\n \"ops\": [{\"a\": 1},\n{\"c\": 3},\n{\"b\":\n 2}],\n \"x\": 1\n}"
        );
        let o = |l| {
            let (f, at) = a.origin(l).unwrap();
            (f.strip_prefix(d.path()).unwrap().display().to_string(), at)
        };
        assert_eq!(o(1), ("w/track.json".into(), 1));
        assert_eq!(o(3), ("common/c.json".into(), 1));
        assert_eq!(o(5), ("w/ops/b.json".into(), 2));
        assert_eq!(o(6), ("w/track.json".into(), 3));
        assert_eq!(o(7), ("w/track.json".into(), 4));
    }

    #[test]
    fn a_glob_matching_nothing_renders_nothing_and_a_loop_is_named() {
        let d = files(&[
            ("track.json", "[{{ rally.collect(parts=\"nope/*.json\") }}]"),
            ("loop.json", "[{{ rally.collect(parts=\"loop.json\") }}]"),
        ]);
        let main = d.path().join("track.json");
        let a = assemble(&main, &std::fs::read_to_string(&main).unwrap()).unwrap();
        assert_eq!(a.text, "[]");
        assert_eq!(a.empty_globs.len(), 1);
        assert!(
            a.empty_globs[0]
                .contains("track.json:1: collect(parts=\"nope/*.json\") matched no file"),
            "{:?}",
            a.empty_globs
        );
        let l = d.path().join("loop.json");
        let e = assemble(&l, &std::fs::read_to_string(&l).unwrap()).unwrap_err();
        assert!(e.contains("collects itself"), "{e}");
    }

    #[test]
    fn other_expressions_are_left_to_the_template() {
        assert!(next_collect("{{ rally.collect(parts=parts) }} {{ x }}").is_none());
        let (b, p, a) = next_collect("a {{- rally.collect(parts=\"x/*.json\") -}} b").unwrap();
        assert_eq!((b, p, a), ("a ", "x/*.json", " b"));
    }
}
