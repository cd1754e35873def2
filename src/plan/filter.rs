//! `--include-tasks` and `--exclude-tasks`, as esrally reads them: a task's name, `type:` an
//! operation type, or `tag:` one of the task's tags, comma-separated. A leaf of a parallel
//! block is kept or dropped on its own (Rally keeps the block while any leaf is kept).

use crate::track::TaskSpec;

/// One filter of a task list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskFilter {
    /// The task's name (runner also takes its operation's name, which a Rally task's name
    /// defaults to).
    Name(String),
    /// The operation's type (`type:search`); a track.py runner's operations by the type the
    /// track registered.
    Type(String),
    /// One of the task's `tags` (`tag:setup`).
    Tag(String),
}

impl std::str::FromStr for TaskFilter {
    type Err = String;

    /// Rally's `_filters_from_filtered_tasks`: `name`, `type:x`, `tag:x`; anything else is
    /// refused.
    fn from_str(text: &str) -> Result<TaskFilter, String> {
        let parts: Vec<&str> = text.trim().split(':').collect();
        match parts.as_slice() {
            [name] if !name.is_empty() => Ok(TaskFilter::Name(name.to_string())),
            ["type", t] if !t.is_empty() => Ok(TaskFilter::Type(t.to_string())),
            ["tag", t] if !t.is_empty() => Ok(TaskFilter::Tag(t.to_string())),
            [kind, _] => Err(format!(
                "task filter `{text}`: `{kind}:` is not a filter; use a task name, `type:OPERATION-TYPE` or `tag:TAG`"
            )),
            _ => Err(format!(
                "task filter `{text}` is not a task name, `type:OPERATION-TYPE` or `tag:TAG`"
            )),
        }
    }
}

impl std::fmt::Display for TaskFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskFilter::Name(n) => write!(f, "{n}"),
            TaskFilter::Type(t) => write!(f, "type:{t}"),
            TaskFilter::Tag(t) => write!(f, "tag:{t}"),
        }
    }
}

impl TaskFilter {
    pub fn matches(&self, t: &TaskSpec) -> bool {
        match self {
            TaskFilter::Name(n) => *n == t.name || *n == t.operation.name,
            TaskFilter::Type(k) => {
                *k == t.operation.kind
                    || t.operation
                        .params
                        .get("operation-type")
                        .and_then(|v| v.as_str())
                        == Some(k.as_str())
            }
            TaskFilter::Tag(tag) => t.tags.iter().any(|x| x == tag),
        }
    }
}

/// Which tasks of a challenge run: all, those a filter matches, or those none matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TaskSelection {
    #[default]
    All,
    Include(Vec<TaskFilter>),
    Exclude(Vec<TaskFilter>),
}

impl TaskSelection {
    pub fn keeps(&self, t: &TaskSpec) -> bool {
        match self {
            TaskSelection::All => true,
            TaskSelection::Include(f) => f.iter().any(|f| f.matches(t)),
            TaskSelection::Exclude(f) => !f.iter().any(|f| f.matches(t)),
        }
    }

    /// How the selection was asked for, for an error that nothing is left.
    pub fn describe(&self) -> Option<String> {
        let list = |f: &[TaskFilter]| {
            f.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        match self {
            TaskSelection::All => None,
            TaskSelection::Include(f) => {
                Some(format!("--include-tasks {} matches no task", list(f)))
            }
            TaskSelection::Exclude(f) => {
                Some(format!("--exclude-tasks {} leaves no task", list(f)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rallys_three_forms_and_refuses_others() {
        assert_eq!(
            "index-append".parse(),
            Ok(TaskFilter::Name("index-append".into()))
        );
        assert_eq!("type:search".parse(), Ok(TaskFilter::Type("search".into())));
        assert_eq!("tag:setup".parse(), Ok(TaskFilter::Tag("setup".into())));
        let e = "kind:search".parse::<TaskFilter>().unwrap_err();
        assert!(e.contains("`kind:` is not a filter"), "{e}");
        assert!("a:b:c".parse::<TaskFilter>().is_err());
        assert!("type:".parse::<TaskFilter>().is_err());
    }
}
