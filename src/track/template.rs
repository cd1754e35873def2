//! Track files are minijinja templates first. Parameters are template variables; includes
//! and imports may only reach files inside the track's own directory.

use super::error::{TrackError, TrackErrorKind};
use crate::files::resolve_inside;
use minijinja::{Environment, UndefinedBehavior, Value};
use serde_json::Map;
use std::path::{Path, PathBuf};

/// Bounds template work so that a looping template fails instead of hanging the runner.
const TEMPLATE_FUEL: u64 = 50_000_000;
/// Upper bound on rendered size: a track is configuration, not data.
const MAX_RENDERED_BYTES: usize = 16 * 1024 * 1024;

/// How undefined variables behave: the first pass (which only reads `parameters`) is lenient,
/// the real render is strict so that a typo in a variable name is an error.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    Lenient,
    Strict,
}

pub fn render(
    source: &str,
    file: &Path,
    params: &Map<String, serde_json::Value>,
    strictness: Strictness,
) -> Result<String, TrackError> {
    let dir = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let env = environment(
        &dir,
        match strictness {
            Strictness::Lenient => UndefinedBehavior::Chainable,
            Strictness::Strict => UndefinedBehavior::Strict,
        },
        &[],
    );
    render_in(
        &env,
        source,
        file,
        Value::from(minijinja::value::Serde(params)),
    )
}

/// An environment with the limits every track template runs under (fuel, recursion, output
/// size) and a loader confined to `dir`; `builtins` are templates served by name (Rally's
/// `rally.helpers`, OSB's `benchmark.helpers`).
pub(crate) fn environment(
    dir: &Path,
    undefined: UndefinedBehavior,
    builtins: &'static [(&'static str, &'static str)],
) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_fuel(Some(TEMPLATE_FUEL));
    env.set_recursion_limit(64);
    env.set_undefined_behavior(undefined);
    let loader_dir = dir.to_path_buf();
    env.set_loader(move |name| {
        if let Some((_, text)) = builtins.iter().find(|(n, _)| *n == name) {
            return Ok(Some(text.to_string()));
        }
        let Some(path) = resolve_inside(&loader_dir, name) else {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                format!("`{name}` is outside the track directory; includes must stay inside it"),
            ));
        };
        match crate::files::read_text(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                format!("cannot read {}: {e}", path.display()),
            )),
        }
    });
    env
}

/// Renders `source` (the text of `file`) in `env`, into a bounded buffer, with errors that name
/// the line and the included template they come from.
pub(crate) fn render_in(
    env: &Environment<'_>,
    source: &str,
    file: &Path,
    ctx: Value,
) -> Result<String, TrackError> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "track".into());
    let template_error = |e: minijinja::Error| {
        let mut msg = format!(
            "template error: {}",
            e.detail()
                .map(str::to_string)
                .unwrap_or_else(|| e.kind().to_string())
        );
        // An include's own failure (a loop, a bad part) is the cause; name it.
        let mut cause = std::error::Error::source(&e);
        while let Some(c) = cause {
            if let Some(inner) = c.downcast_ref::<minijinja::Error>() {
                msg.push_str(&format!(
                    ": {}",
                    inner
                        .detail()
                        .map(str::to_string)
                        .unwrap_or_else(|| inner.kind().to_string())
                ));
                if let (Some(n), Some(l)) = (inner.name(), inner.line()) {
                    if n != name {
                        msg.push_str(&format!(" (`{n}` line {l})"));
                    }
                }
            }
            cause = c.source();
        }
        let location = e.line().map(|l| (l, 1));
        // The line is the included template's own: name that file, and where it came from.
        if let Some(n) = e.name().filter(|n| *n != name && !n.contains(".helpers")) {
            msg.push_str(&format!(" (in `{n}`, included from {name})"));
            let part = file
                .parent()
                .map(|d| d.join(n))
                .unwrap_or_else(|| PathBuf::from(n));
            return TrackError::new(TrackErrorKind::Template, part, msg).at(location);
        }
        TrackError::new(TrackErrorKind::Template, file, msg).at(location)
    };
    let template = env
        .template_from_named_str(&name, source)
        .map_err(template_error)?;
    // Rendered into a bounded buffer: fuel limits the steps, not what each step writes.
    let mut out = Bounded {
        buf: Vec::new(),
        overflowed: false,
    };
    if let Err(e) = template.render_captured_to(ctx, &mut out) {
        if out.overflowed {
            return Err(TrackError::new(
                TrackErrorKind::Template,
                file,
                "the rendered track would be larger than 16 MB; tracks are limited to 16 MB",
            ));
        }
        return Err(template_error(e));
    }
    String::from_utf8(out.buf).map_err(|_| {
        TrackError::new(
            TrackErrorKind::Template,
            file,
            "the template rendered text that is not UTF-8",
        )
    })
}

/// A writer that refuses to grow past the rendered-size limit.
struct Bounded {
    buf: Vec<u8>,
    overflowed: bool,
}

impl std::io::Write for Bounded {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + data.len() > MAX_RENDERED_BYTES {
            self.overflowed = true;
            return Err(std::io::Error::other("rendered track too large"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: &str) -> Map<String, serde_json::Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn renders_params_as_variables() {
        let out = render(
            "clients: {{ clients }}\nsizes: {{ sizes }}",
            Path::new("t.yaml"),
            &params(r#"{"clients": 4, "sizes": [1, 2]}"#),
            Strictness::Strict,
        )
        .unwrap();
        assert_eq!(out, "clients: 4\nsizes: [1,2]");
    }

    #[test]
    fn strict_mode_rejects_undefined_variables_with_line() {
        let e = render(
            "a: 1\nb: {{ nope }}\n",
            Path::new("t.yaml"),
            &Map::new(),
            Strictness::Strict,
        )
        .unwrap_err();
        assert_eq!(e.kind, TrackErrorKind::Template);
        assert_eq!(e.location.map(|l| l.0), Some(2));
    }

    #[test]
    fn include_cannot_leave_the_track_directory() {
        let dir = tempfile::tempdir().unwrap();
        let track = dir.path().join("track.yaml");
        let e = render(
            "{% include '../../etc/passwd' %}",
            &track,
            &Map::new(),
            Strictness::Strict,
        )
        .unwrap_err();
        assert!(
            e.message.contains("outside the track directory"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_symlink_out_of_the_track_directory_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.yaml"), "x: 1").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.yaml"),
            dir.path().join("part.yaml"),
        )
        .unwrap();
        let e = render(
            "{% include 'part.yaml' %}",
            &dir.path().join("track.yaml"),
            &Map::new(),
            Strictness::Strict,
        )
        .unwrap_err();
        assert!(
            e.message.contains("outside the track directory"),
            "{}",
            e.message
        );
    }

    #[test]
    fn output_is_bounded_while_rendering() {
        let e = render(
            "{% set s = 'x' * 1000000 %}{% for i in range(100) %}{{ s }}{% endfor %}",
            Path::new("t.yaml"),
            &Map::new(),
            Strictness::Strict,
        )
        .unwrap_err();
        assert!(e.message.contains("larger than 16 MB"), "{}", e.message);
    }

    #[test]
    fn include_inside_the_track_directory_works() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("part.yaml"), "x: {{ v }}").unwrap();
        let out = render(
            "{% include 'part.yaml' %}",
            &dir.path().join("track.yaml"),
            &params(r#"{"v": 3}"#),
            Strictness::Strict,
        )
        .unwrap();
        assert_eq!(out, "x: 3");
    }

    #[test]
    fn endless_loops_run_out_of_fuel() {
        let e = render(
            "{% for i in range(100000000) %}{{ i }}{% endfor %}",
            Path::new("t.yaml"),
            &Map::new(),
            Strictness::Strict,
        )
        .unwrap_err();
        assert_eq!(e.kind, TrackErrorKind::Template);
    }
}
