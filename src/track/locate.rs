//! Maps a JSON-pointer path inside a YAML document to its line and column, so that errors
//! found after parsing (schema violations, semantic checks) can still point into the file.

use std::collections::HashMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// Positions of every node of a YAML document, keyed by JSON pointer (`""` is the root).
/// For a mapping value the position is that of its key, which is where a reader looks.
#[derive(Debug, Default, Clone)]
pub struct Locator {
    positions: HashMap<String, (usize, usize)>,
}

enum Frame {
    /// `first_key`: the parser marks a block mapping's start late, so the mapping takes the
    /// position of its first key instead.
    Map {
        path: String,
        pending_key: Option<String>,
        expecting_key: bool,
        first_key: bool,
    },
    Seq {
        path: String,
        next_index: usize,
    },
}

struct Builder {
    stack: Vec<Frame>,
    positions: HashMap<String, (usize, usize)>,
}

impl Builder {
    /// The path of the node that starts now, or None when the event is a mapping key.
    fn next_node_path(&mut self, scalar: Option<&str>, mark: Marker) -> Option<String> {
        let pos = (mark.line(), mark.col() + 1);
        match self.stack.last_mut() {
            None => {
                self.positions.entry(String::new()).or_insert(pos);
                Some(String::new())
            }
            Some(Frame::Seq { path, next_index }) => {
                let p = format!("{path}/{next_index}");
                *next_index += 1;
                self.positions.entry(p.clone()).or_insert(pos);
                Some(p)
            }
            Some(Frame::Map {
                path,
                pending_key,
                expecting_key,
                first_key,
            }) => {
                if *expecting_key {
                    if std::mem::take(first_key) {
                        self.positions.insert(path.clone(), pos);
                    }
                    let key = scalar.unwrap_or("?").replace('~', "~0").replace('/', "~1");
                    let p = format!("{path}/{key}");
                    self.positions.entry(p).or_insert(pos);
                    *pending_key = Some(key);
                    *expecting_key = false;
                    None
                } else {
                    *expecting_key = true;
                    let key = pending_key.take().unwrap_or_default();
                    Some(format!("{path}/{key}"))
                }
            }
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        match ev {
            Event::Scalar(value, ..) => {
                self.next_node_path(Some(&value), mark);
            }
            Event::Alias(_) => {
                self.next_node_path(None, mark);
            }
            Event::MappingStart(..) => {
                if let Some(path) = self.next_node_path(None, mark) {
                    self.stack.push(Frame::Map {
                        path,
                        pending_key: None,
                        expecting_key: true,
                        first_key: true,
                    });
                } else {
                    // A complex (non-scalar) mapping key: track it so the nesting stays right.
                    self.stack.push(Frame::Map {
                        path: "/?".into(),
                        pending_key: None,
                        expecting_key: true,
                        first_key: false,
                    });
                }
            }
            Event::SequenceStart(..) => {
                let path = self
                    .next_node_path(None, mark)
                    .unwrap_or_else(|| "/?".into());
                self.stack.push(Frame::Seq {
                    path,
                    next_index: 0,
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}

impl Locator {
    /// Builds the locator; a document that does not parse yields an empty locator (the YAML
    /// error itself is reported by the loader, with its own position).
    pub fn new(text: &str) -> Locator {
        let mut builder = Builder {
            stack: Vec::new(),
            positions: HashMap::new(),
        };
        let mut parser = Parser::new_from_str(text);
        if parser.load(&mut builder, false).is_err() {
            return Locator::default();
        }
        Locator {
            positions: builder.positions,
        }
    }

    /// The position of `pointer`, or of its nearest ancestor that has one.
    pub fn find(&self, pointer: &str) -> Option<(usize, usize)> {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.positions.get(p) {
                return Some(*pos);
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keys_and_sequence_items() {
        let text = "name: x\nchallenges:\n  - name: a\n    schedule:\n      - operation: bulk\n        clients: 4\n";
        let loc = Locator::new(text);
        assert_eq!(loc.find("/name"), Some((1, 1)));
        assert_eq!(loc.find("/challenges/0/name"), Some((3, 5)));
        assert_eq!(loc.find("/challenges/0/schedule/0/clients"), Some((6, 9)));
        // Unknown leaf falls back to the nearest known ancestor.
        assert_eq!(loc.find("/challenges/0/schedule/0/nope"), Some((5, 9)));
    }

    #[test]
    fn flow_style_is_located() {
        let loc = Locator::new("a: {b: [1, 2, {c: 3}]}\n");
        assert_eq!(loc.find("/a/b/2/c"), Some((1, 16)));
    }
}
