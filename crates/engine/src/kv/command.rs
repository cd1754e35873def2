//! The Redis commands the embedded store understands for the generic `command` operation.
//! Checked once when a task is prepared, so a track naming a command the store lacks fails
//! before the race, not on every call.

use crate::error::Error;
use crate::error::ErrorKind;
use crate::KvStore;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Get,
    Set,
    Del,
    Exists,
    Incr,
    IncrBy,
    Decr,
    Ping,
}

/// Each verb with its name and argument count (the name included).
const VERBS: &[(&str, Verb, usize)] = &[
    ("GET", Verb::Get, 2),
    ("SET", Verb::Set, 3),
    ("DEL", Verb::Del, 2),
    ("EXISTS", Verb::Exists, 2),
    ("INCR", Verb::Incr, 2),
    ("INCRBY", Verb::IncrBy, 3),
    ("DECR", Verb::Decr, 2),
    ("PING", Verb::Ping, 1),
];

#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    Yes,
    No,
}

/// A command with `{key}`/`{value}` placeholders, as the caller parsed it: the store asks it
/// for each argument, filled for one key and value.
pub trait ArgTemplate: Send + Sync {
    /// The command's name, upper-cased (`HSET`).
    fn name(&self) -> String;
    /// Arguments, the name included.
    fn arg_count(&self) -> usize;
    /// Writes argument `i` for `key` and `value` into `out` (cleared first).
    fn write_arg(&self, i: usize, key: &[u8], value: &[u8], out: &mut Vec<u8>);
}

pub struct StoreCommand {
    verb: Verb,
    command: Arc<dyn ArgTemplate>,
    /// INCRBY's increment when it is a literal.
    by: i64,
}

impl StoreCommand {
    pub fn compile(command: Arc<dyn ArgTemplate>) -> Result<StoreCommand, Error> {
        let name = command.name();
        let names = || {
            VERBS
                .iter()
                .map(|(n, ..)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(&(_, verb, arity)) = VERBS.iter().find(|(n, ..)| *n == name) else {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!(
                    "the embedded store does not implement `{name}` (it knows {})",
                    names()
                ),
            ));
        };
        if command.arg_count() != arity {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!(
                    "`{name}` takes {} argument(s) here, the command has {}",
                    arity - 1,
                    command.arg_count() - 1
                ),
            ));
        }
        let by = match verb {
            Verb::IncrBy => {
                let mut text = Vec::new();
                command.write_arg(2, b"", b"", &mut text);
                std::str::from_utf8(&text)
                    .ok()
                    .and_then(|t| t.parse().ok())
                    .ok_or_else(|| {
                        Error::new(
                            ErrorKind::BadRequest,
                            "INCRBY's increment must be a literal integer on the embedded store",
                        )
                    })?
            }
            _ => 0,
        };
        Ok(StoreCommand { verb, command, by })
    }

    /// Runs the command for one generated key and value. `args` is the client's scratch space.
    pub fn run(
        &self,
        store: &KvStore,
        key: &[u8],
        value: &[u8],
        args: &mut Vec<Vec<u8>>,
    ) -> Result<Found, Error> {
        let n = self.command.arg_count();
        if args.len() < n {
            args.resize_with(n, Vec::new);
        }
        for (i, arg) in args.iter_mut().enumerate().take(n).skip(1) {
            self.command.write_arg(i, key, value, arg);
        }
        let found = |b: bool| if b { Found::Yes } else { Found::No };
        let reply_error = |e: &str| Error::new(ErrorKind::ErrorReply, e);
        Ok(match self.verb {
            Verb::Get => found(store.get(&args[1]).is_some()),
            Verb::Set => {
                store.put(&args[1], &args[2]);
                Found::No
            }
            Verb::Del => found(store.delete(&args[1])),
            Verb::Exists => found(store.get(&args[1]).is_some()),
            Verb::Incr => store
                .incr(&args[1], 1)
                .map(|_| Found::No)
                .map_err(reply_error)?,
            Verb::IncrBy => store
                .incr(&args[1], self.by)
                .map(|_| Found::No)
                .map_err(reply_error)?,
            Verb::Decr => store
                .incr(&args[1], -1)
                .map(|_| Found::No)
                .map_err(reply_error)?,
            Verb::Ping => Found::No,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words split on spaces; `{key}` and `{value}` replaced wherever they appear.
    struct Words(Vec<String>);

    impl ArgTemplate for Words {
        fn name(&self) -> String {
            self.0[0].to_ascii_uppercase()
        }
        fn arg_count(&self) -> usize {
            self.0.len()
        }
        fn write_arg(&self, i: usize, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
            let text = self.0[i]
                .replace("{key}", std::str::from_utf8(key).unwrap())
                .replace("{value}", std::str::from_utf8(value).unwrap());
            out.clear();
            out.extend_from_slice(text.as_bytes());
        }
    }

    fn compile(text: &str) -> Result<StoreCommand, Error> {
        StoreCommand::compile(Arc::new(Words(
            text.split(' ').map(str::to_string).collect(),
        )))
    }

    #[test]
    fn runs_what_it_knows_on_spliced_keys() {
        let store = KvStore::default();
        let mut args = Vec::new();
        compile("set user:{key} {value}")
            .unwrap()
            .run(&store, b"k1", b"v", &mut args)
            .unwrap();
        assert_eq!(store.get(b"user:k1"), Some(1));
        assert_eq!(
            compile("EXISTS user:{key}")
                .unwrap()
                .run(&store, b"k1", b"", &mut args)
                .unwrap(),
            Found::Yes
        );
        compile("INCRBY n:{key} 5")
            .unwrap()
            .run(&store, b"k1", b"", &mut args)
            .unwrap();
        assert_eq!(store.incr(b"n:k1", 0), Ok(5));
        let e = compile("INCR user:{key}")
            .unwrap()
            .run(&store, b"k1", b"", &mut args)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::ErrorReply);
    }

    #[test]
    fn refuses_what_it_cannot_run() {
        assert!(compile("HSET h {key} {value}")
            .err()
            .unwrap()
            .message
            .contains("does not implement `HSET`"));
        assert!(compile("GET a b")
            .err()
            .unwrap()
            .message
            .contains("takes 1 argument"));
        assert!(compile("INCRBY {key} {value}")
            .err()
            .unwrap()
            .message
            .contains("literal integer"));
    }
}
