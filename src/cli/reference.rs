//! docs/cli.md's reference, written from the command line's own definition (clap), so that
//! the documentation names every command and option exactly as the binary takes them. A test
//! fails when the file and the definition differ; `RUNNER_BLESS_DOCS=1 cargo test` rewrites it.

use clap::CommandFactory;
use std::fmt::Write as _;

/// Where the generated part of docs/cli.md starts and ends.
pub const BEGIN: &str = "<!-- reference: generated from the CLI definition by `RUNNER_BLESS_DOCS=1 cargo test cli::reference`; do not edit below -->";
pub const END: &str = "<!-- end of the generated reference -->";

/// The reference: every subcommand, its usage, and a table of its options.
pub fn markdown() -> String {
    let mut cli = super::Cli::command();
    cli.build();
    let mut out = String::new();
    let globals: Vec<&clap::Arg> = cli.get_arguments().filter(|a| is_documented(a)).collect();
    let _ = writeln!(out, "## Options of every command\n");
    table(&mut out, &globals);
    for sub in cli.get_subcommands() {
        let name = sub.get_name();
        let _ = writeln!(out, "\n## runner {name}\n");
        if let Some(about) = sub.get_long_about().or(sub.get_about()) {
            let _ = writeln!(out, "{}\n", one_paragraph(&about.to_string()));
        }
        let mut usage = sub.clone().bin_name(format!("runner {name}"));
        let usage = usage.render_usage().to_string();
        let usage = usage.trim_start_matches("Usage: ").trim();
        let _ = writeln!(out, "```text\n{usage}\n```\n");
        let args: Vec<&clap::Arg> = sub
            .get_arguments()
            .filter(|a| is_documented(a) && !a.is_global_set())
            .collect();
        if args.is_empty() {
            continue;
        }
        table(&mut out, &args);
    }
    out
}

fn is_documented(a: &clap::Arg) -> bool {
    !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version")
}

fn table(out: &mut String, args: &[&clap::Arg]) {
    let _ = writeln!(out, "| option | what it does |\n|---|---|");
    for a in args {
        let _ = writeln!(out, "| {} | {} |", cell(&flag(a)), cell(&what(a)));
    }
}

/// `--name VALUE` (and its aliases), or a positional `NAME`.
fn flag(a: &clap::Arg) -> String {
    let value = a
        .get_value_names()
        .and_then(|v| v.first().map(|s| s.to_string()))
        .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
    let takes_value = a.get_action().takes_values();
    let Some(long) = a.get_long() else {
        return format!("`{value}`");
    };
    let mut names = vec![format!("--{long}")];
    if let Some(short) = a.get_short() {
        names.insert(0, format!("-{short}"));
    }
    names.extend(
        a.get_visible_aliases()
            .into_iter()
            .flatten()
            .map(|s| format!("--{s}")),
    );
    let optional = a.get_num_args().is_some_and(|n| n.min_values() == 0);
    let shown = names.join(", ");
    match (takes_value, optional) {
        (false, _) => format!("`{shown}`"),
        (true, true) => format!("`{shown} [{value}]`"),
        (true, false) => format!("`{shown} {value}`"),
    }
}

/// The help text, its choices and its default.
fn what(a: &clap::Arg) -> String {
    let mut text = a
        .get_long_help()
        .or(a.get_help())
        .map(|h| one_paragraph(&h.to_string()))
        .unwrap_or_default();
    if !text.is_empty() && !text.ends_with('.') {
        text.push('.');
    }
    let choices: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if !choices.is_empty() && a.get_action().takes_values() {
        let _ = write!(text, " One of {}.", choices.join(", "));
    }
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .filter(|d| !d.is_empty())
        .collect();
    if !defaults.is_empty() && a.get_action().takes_values() {
        let _ = write!(text, " Default: `{}`.", defaults.join(","));
    }
    text.trim().to_string()
}

fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option of every command says what it does.
    #[test]
    fn every_option_has_help() {
        let mut cli = super::super::Cli::command();
        cli.build();
        let mut missing = Vec::new();
        for sub in std::iter::once(&cli).chain(cli.get_subcommands()) {
            for a in sub.get_arguments().filter(|a| is_documented(a)) {
                if a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{} {}", sub.get_name(), flag(a)));
                }
            }
        }
        assert!(missing.is_empty(), "options without help: {missing:#?}");
    }

    #[test]
    fn docs_cli_md_is_the_cli_definition() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text
            .find(BEGIN)
            .expect("docs/cli.md holds the reference's start marker");
        let end = text
            .find(END)
            .expect("docs/cli.md holds the reference's end marker");
        let wanted = format!("{BEGIN}\n\n{}\n{END}", markdown());
        let current = &text[start..end + END.len()];
        if current == wanted {
            return;
        }
        if std::env::var_os("RUNNER_BLESS_DOCS").is_some() {
            let updated = format!("{}{wanted}{}", &text[..start], &text[end + END.len()..]);
            std::fs::write(&path, updated).unwrap();
            return;
        }
        let line = current
            .lines()
            .zip(wanted.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "docs/cli.md's reference differs from the CLI definition near its line {}: run `RUNNER_BLESS_DOCS=1 cargo test cli::reference` and commit docs/cli.md",
            line + 1
        );
    }
}
