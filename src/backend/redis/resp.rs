//! A lean RESP2 codec: commands are encoded into a reused buffer; replies are parsed straight
//! from the socket's read buffer and checked without building values.

use crate::ops::{ArgPart, CustomCommand, KvCommand};

/// RESP lengths are nearly always one or two digits: those skip the general conversion.
#[inline]
fn push_decimal(out: &mut Vec<u8>, n: usize) {
    if n < 10 {
        out.push(b'0' + n as u8);
    } else if n < 100 {
        out.extend_from_slice(&[b'0' + (n / 10) as u8, b'0' + (n % 10) as u8]);
    } else {
        let mut digits = [0u8; 20];
        out.extend_from_slice(crate::units::decimal_bytes(&mut digits, n as u64));
    }
}

/// Appends one command (an array of bulk strings).
pub fn push_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.push(b'*');
    push_decimal(out, args.len());
    out.extend_from_slice(b"\r\n");
    for a in args {
        push_command_arg(out, a);
    }
}

/// GET, SET, DEL and INCR for one key size and value, each encoded once as the bytes before
/// the key and the bytes after it, so that a command costs three copies per operation
/// instead of its whole encoding (a sixth of the driver's time at 1,000 pipelined clients).
#[derive(Default)]
pub struct KeyedCommands {
    key_size: usize,
    value: Vec<u8>,
    /// Around the key, by [`KvCommand::index`]; empty until `prepare`.
    around_key: [(Vec<u8>, Vec<u8>); KvCommand::COUNT],
}

impl KeyedCommands {
    /// Makes the encodings fit `key_size` and `value`; a no-op while they stay the same.
    pub fn prepare(&mut self, key_size: usize, value: &[u8]) {
        if !self.around_key[0].0.is_empty() && self.key_size == key_size && self.value == value {
            return;
        }
        self.key_size = key_size;
        self.value.clear();
        self.value.extend_from_slice(value);
        for command in KvCommand::ALL {
            let (name, with_value): (&[u8], bool) = match command {
                KvCommand::Get => (b"GET", false),
                KvCommand::Put => (b"SET", true),
                KvCommand::Delete => (b"DEL", false),
                KvCommand::Incr => (b"INCR", false),
                // Custom commands are spliced by `push_custom`.
                KvCommand::Command => continue,
            };
            let (before, after) = &mut self.around_key[command.index()];
            before.clear();
            after.clear();
            before.push(b'*');
            push_decimal(before, if with_value { 3 } else { 2 });
            before.extend_from_slice(b"\r\n$");
            push_decimal(before, name.len());
            before.extend_from_slice(b"\r\n");
            before.extend_from_slice(name);
            before.extend_from_slice(b"\r\n$");
            push_decimal(before, key_size);
            before.extend_from_slice(b"\r\n");
            after.extend_from_slice(b"\r\n");
            if with_value {
                push_command_arg(after, value);
            }
        }
    }

    /// Appends `command` (not a custom one) for `key` (of the prepared key size).
    #[inline]
    pub fn push(&self, out: &mut Vec<u8>, command: KvCommand, key: &[u8]) {
        debug_assert_eq!(key.len(), self.key_size);
        let (before, after) = &self.around_key[command.index()];
        out.extend_from_slice(before);
        out.extend_from_slice(key);
        out.extend_from_slice(after);
    }
}

fn push_command_arg(out: &mut Vec<u8>, arg: &[u8]) {
    out.push(b'$');
    push_decimal(out, arg.len());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(arg);
    out.extend_from_slice(b"\r\n");
}

/// Appends a custom command for one key and value, splicing them into its arguments
/// without building the arguments first.
pub fn push_custom(out: &mut Vec<u8>, command: &CustomCommand, key: &[u8], value: &[u8]) {
    out.push(b'*');
    push_decimal(out, command.args.len());
    out.extend_from_slice(b"\r\n");
    for arg in &command.args {
        let len: usize = arg
            .iter()
            .map(|p| match p {
                ArgPart::Literal(b) => b.len(),
                ArgPart::Key => key.len(),
                ArgPart::Value => value.len(),
            })
            .sum();
        out.push(b'$');
        push_decimal(out, len);
        out.extend_from_slice(b"\r\n");
        for p in arg {
            out.extend_from_slice(match p {
                ArgPart::Literal(b) => b,
                ArgPart::Key => key,
                ArgPart::Value => value,
            });
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// What one reply was, as far as a benchmark cares.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// A value (simple string, integer, non-null bulk string, array).
    Value,
    /// A null bulk string or array: GET of a missing key.
    Nil,
    /// An error reply: its text (allocated only for errors).
    Error(String),
}

/// The most bytes one reply may hold: a benchmark reads back what it wrote, and a server that
/// declares (or streams) more is not believed, so memory stays bounded whatever it sends.
pub const MAX_REPLY_BYTES: usize = 64 << 20;

#[derive(Debug)]
pub enum ReadError {
    Closed,
    Protocol(String),
}

fn number(bytes: &[u8]) -> Result<i64, ReadError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            ReadError::Protocol(format!(
                "not a number: {:?}",
                String::from_utf8_lossy(bytes)
            ))
        })
}

/// Parses one whole reply from the front of `buf` without waiting: Ok(Some((bytes used,
/// reply))), Ok(None) when `buf` does not yet hold all of it. Like [`read_reply`], an array
/// reports the first error inside it.
pub fn parse_reply(buf: &[u8]) -> Result<Option<(usize, Reply)>, ReadError> {
    let (mut pos, mut pending) = (0usize, 1u64);
    let (mut first, mut error) = (None, None);
    while pending > 0 {
        pending -= 1;
        let Some(end) = buf[pos..].windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let line = &buf[pos..pos + end];
        if line.is_empty() {
            return Err(ReadError::Protocol("empty reply line".into()));
        }
        pos += end + 2;
        let (kind, rest) = (line[0], &line[1..]);
        let reply = match kind {
            b'+' | b':' => Reply::Value,
            b'-' => Reply::Error(String::from_utf8_lossy(rest).into_owned()),
            b'$' => {
                let len = number(rest)?;
                if len == -1 {
                    Reply::Nil
                } else if !(0..=MAX_REPLY_BYTES as i64).contains(&len) {
                    return Err(ReadError::Protocol(format!("a bulk string of length {len} (at most {MAX_REPLY_BYTES} bytes are read, and -1 is nil)")));
                } else {
                    let need = len as usize + 2;
                    if buf.len() < pos + need {
                        return Ok(None);
                    }
                    pos += need;
                    Reply::Value
                }
            }
            b'*' => {
                let len = number(rest)?;
                if len == -1 {
                    Reply::Nil
                } else if !(0..=MAX_REPLY_BYTES as i64).contains(&len) {
                    return Err(ReadError::Protocol(format!("an array of length {len} (at most {MAX_REPLY_BYTES} elements are read, and -1 is nil)")));
                } else {
                    pending += len as u64;
                    Reply::Value
                }
            }
            other => {
                return Err(ReadError::Protocol(format!(
                    "unexpected reply type byte {:?}",
                    other as char
                )))
            }
        };
        if let Reply::Error(_) = reply {
            error.get_or_insert(reply);
        } else if first.is_none() {
            first = Some(reply);
        }
    }
    Ok(Some((pos, error.or(first).unwrap_or(Reply::Value))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_commands() {
        let mut out = Vec::new();
        push_command(&mut out, &[b"SET", b"k1", b"value"]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$5\r\nvalue\r\n");
        let custom =
            CustomCommand::parse(&serde_json::json!("HSET h:{key} f {value}{value}")).unwrap();
        out.clear();
        push_custom(&mut out, &custom, b"k1", b"ab");
        assert_eq!(
            out,
            b"*4\r\n$4\r\nHSET\r\n$4\r\nh:k1\r\n$1\r\nf\r\n$4\r\nabab\r\n"
        );
    }

    #[test]
    fn keyed_commands_encode_as_whole_commands_do() {
        let mut keyed = KeyedCommands::default();
        for (key, value) in [
            (&b"k0000001"[..], &b"abc"[..]),
            (b"k00000000000002", &[b'v'; 120][..]),
            (b"k00000000000003", b""),
        ] {
            keyed.prepare(key.len(), value);
            for (command, args) in [
                (KvCommand::Get, vec![&b"GET"[..], key]),
                (KvCommand::Put, vec![b"SET", key, value]),
                (KvCommand::Delete, vec![b"DEL", key]),
                (KvCommand::Incr, vec![b"INCR", key]),
            ] {
                let (mut fast, mut whole) = (Vec::new(), Vec::new());
                keyed.push(&mut fast, command, key);
                push_command(&mut whole, &args);
                assert_eq!(
                    String::from_utf8_lossy(&fast),
                    String::from_utf8_lossy(&whole)
                );
            }
        }
    }

    #[test]
    fn lengths_of_every_width() {
        for len in [0usize, 9, 10, 99, 100, 12345] {
            let arg = vec![b'x'; len];
            let mut out = Vec::new();
            push_command(&mut out, &[&arg]);
            assert_eq!(
                out,
                [format!("*1\r\n${len}\r\n").as_bytes(), &arg, b"\r\n"].concat()
            );
        }
    }

    #[test]
    fn parses_complete_replies_and_waits_for_partial_ones() {
        let data: &[u8] = b"+OK\r\n$5\r\nhello\r\n*2\r\n$-1\r\n-ERR x\r\n";
        let (n, r) = parse_reply(data).unwrap().unwrap();
        assert_eq!((n, r), (5, Reply::Value));
        let (m, r) = parse_reply(&data[n..]).unwrap().unwrap();
        assert_eq!((m, r), (11, Reply::Value));
        let (k, r) = parse_reply(&data[n + m..]).unwrap().unwrap();
        assert_eq!((n + m + k, r), (data.len(), Reply::Error("ERR x".into())));
        for cut in 1..data.len() - n - m {
            assert!(
                parse_reply(&data[n + m..n + m + cut]).unwrap().is_none(),
                "cut at {cut}"
            );
        }
        assert!(parse_reply(b"$5\r\nhel").unwrap().is_none());
        assert!(matches!(parse_reply(b"?\r\n"), Err(ReadError::Protocol(_))));
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        assert!(matches!(
            parse_reply(b"HTTP/1.1 200 OK\r\n"),
            Err(ReadError::Protocol(_))
        ));
        assert!(matches!(
            parse_reply(b"$abc\r\n"),
            Err(ReadError::Protocol(_))
        ));
    }
}
