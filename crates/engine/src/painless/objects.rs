//! The objects of the subset that are neither numbers, strings, lists nor maps: lambdas,
//! streams, a map's `keySet()`/`values()`/`entrySet()` views (changes through them change the
//! map), Elasticsearch's `CIDR`, `StringTokenizer`, regex `Pattern`s and `Matcher`s,
//! `Collectors`, `DateTimeFormatter` constants, and caught exceptions.

use super::ast::{Lambda, Regex};
use super::fault::Fault;
use super::val::{ListRef, MapRef, Val};
use serde_json::Value;
use std::cell::RefCell;
use std::net::IpAddr;
use std::sync::Arc;

/// Classes a script may name in `instanceof` besides Java's collections and boxes.
pub const CLASSES: [&str; 10] = [
    "CIDR",
    "StringTokenizer",
    "Pattern",
    "Matcher",
    "Stream",
    "Function",
    "DateTimeFormatter",
    "Exception",
    "RuntimeException",
    "IllegalArgumentException",
];

#[derive(Debug)]
pub enum Obj {
    Lambda(Arc<Lambda>),
    Stream(Vec<Val>),
    View(MapRef, View),
    /// A map's entry, read from (and written to) the map when asked.
    Entry(MapRef, String),
    Cidr(Cidr),
    Tokenizer(RefCell<Tokenizer>),
    Pattern(Arc<Regex>),
    Matcher(RefCell<Matcher>),
    /// `Collectors.toList()` / `toSet()`.
    Collector(bool),
    /// A `DateTimeFormatter` constant by name.
    Formatter(&'static str),
    Exception {
        class: String,
        message: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum View {
    Keys,
    Values,
    Entries,
}

impl PartialEq for Obj {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Obj {
    pub fn class(&self) -> &'static str {
        match self {
            Obj::Lambda(_) => "Function",
            Obj::Stream(_) => "Stream",
            Obj::View(_, View::Values) => "Collection",
            Obj::View(..) => "Set",
            Obj::Entry(..) => "Map.Entry",
            Obj::Cidr(_) => "CIDR",
            Obj::Tokenizer(_) => "StringTokenizer",
            Obj::Pattern(_) => "Pattern",
            Obj::Matcher(_) => "Matcher",
            Obj::Collector(_) => "Collector",
            Obj::Formatter(_) => "DateTimeFormatter",
            Obj::Exception { .. } => "Exception",
        }
    }

    pub fn to_json(&self) -> Result<Value, Fault> {
        match self {
            Obj::View(..) | Obj::Stream(_) => self.items()?.to_json(),
            Obj::Exception { class, message } => Ok(Value::String(format!("{class}: {message}"))),
            other => Err(Fault::arg(format!(
                "a {} has no JSON form (it cannot be stored in a document or returned)",
                other.class()
            ))),
        }
    }

    /// The items a view or stream holds, as a new list; what a loop over it sees.
    pub fn items(&self) -> Result<Val, Fault> {
        let items = match self {
            Obj::Stream(items) => items.clone(),
            Obj::View(m, View::Keys) => {
                m.0.borrow()
                    .iter()
                    .map(|(k, _)| Val::Str(k.clone()))
                    .collect()
            }
            Obj::View(m, View::Values) => m.0.borrow().iter().map(|(_, v)| v.clone()).collect(),
            Obj::View(m, View::Entries) => {
                m.0.borrow()
                    .iter()
                    .map(|(k, _)| Val::Obj(std::rc::Rc::new(Obj::Entry(m.clone(), k.clone()))))
                    .collect()
            }
            other => return Err(Fault::arg(format!("cannot loop over a {}", other.class()))),
        };
        Ok(Val::List(ListRef::new(items)))
    }
}

pub fn obj(o: Obj) -> Val {
    Val::Obj(std::rc::Rc::new(o))
}

/// Elasticsearch's Painless `CIDR`: a network and its prefix length.
#[derive(Debug)]
pub struct Cidr {
    network: IpAddr,
    prefix: u32,
}

impl Cidr {
    pub fn parse(text: &str) -> Result<Cidr, Fault> {
        let bad = || Fault::arg(format!("'{text}' is not an IP string literal."));
        let (ip, prefix) = match text.split_once('/') {
            Some((ip, p)) => (ip, Some(p)),
            None => (text, None),
        };
        let network: IpAddr = ip.parse().map_err(|_| bad())?;
        let width = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => width,
            Some(p) => p
                .parse::<u32>()
                .ok()
                .filter(|p| *p <= width)
                .ok_or_else(|| Fault::arg(format!("Expected a CIDR address, found [{text}]")))?,
        };
        Ok(Cidr { network, prefix })
    }

    pub fn contains(&self, ip: &str) -> Result<bool, Fault> {
        let ip: IpAddr = ip
            .parse()
            .map_err(|_| Fault::arg(format!("'{ip}' is not an IP string literal.")))?;
        let bits = |a: &IpAddr| -> u128 {
            match a {
                IpAddr::V4(v) => u32::from(*v) as u128,
                IpAddr::V6(v) => u128::from(*v),
            }
        };
        if ip.is_ipv4() != self.network.is_ipv4() {
            return Ok(false);
        }
        let width = if ip.is_ipv4() { 32 } else { 128 };
        let shift = width - self.prefix;
        let (a, b) = (bits(&ip), bits(&self.network));
        Ok(shift >= 128 || (a >> shift) == (b >> shift))
    }
}

/// Java's `StringTokenizer`: tokens between any of the delimiter characters.
#[derive(Debug)]
pub struct Tokenizer {
    text: Vec<char>,
    delims: Vec<char>,
    at: usize,
}

impl Tokenizer {
    pub fn new(text: &str, delims: &str) -> Tokenizer {
        Tokenizer {
            text: text.chars().collect(),
            delims: delims.chars().collect(),
            at: 0,
        }
    }

    fn skip(&mut self) {
        while self.at < self.text.len() && self.delims.contains(&self.text[self.at]) {
            self.at += 1;
        }
    }

    pub fn next_token(&mut self) -> Result<String, Fault> {
        self.skip();
        if self.at >= self.text.len() {
            return Err(Fault::thrown("NoSuchElementException", "no more tokens"));
        }
        let start = self.at;
        while self.at < self.text.len() && !self.delims.contains(&self.text[self.at]) {
            self.at += 1;
        }
        Ok(self.text[start..self.at].iter().collect())
    }

    pub fn has_more(&mut self) -> bool {
        self.skip();
        self.at < self.text.len()
    }

    pub fn count(&self) -> i64 {
        let mut n = 0;
        let mut inside = false;
        for c in &self.text[self.at..] {
            let delim = self.delims.contains(c);
            if !delim && !inside {
                n += 1;
            }
            inside = !delim;
        }
        n
    }
}

/// A `Matcher`: its pattern, text, and the groups of its last match.
#[derive(Debug)]
pub struct Matcher {
    pub pattern: Arc<Regex>,
    pub text: String,
    /// Where the next `find()` starts.
    pub from: usize,
    pub groups: Option<Vec<Option<String>>>,
}

impl Matcher {
    pub fn run(&mut self, whole: bool) -> Result<bool, Fault> {
        let found = if whole {
            self.pattern.matches_whole(&self.text)?
        } else if self.from > self.text.len() {
            None
        } else {
            self.pattern.find_at(&self.text, self.from)?
        };
        self.groups = match found {
            Some((end, groups)) => {
                // After an empty match the next find starts one character on (a byte offset
                // inside a character is no place to search from).
                self.from = match end == self.from {
                    true => end + self.text[end..].chars().next().map_or(1, char::len_utf8),
                    false => end,
                };
                Some(groups)
            }
            None => None,
        };
        Ok(self.groups.is_some())
    }

    pub fn group(&self, key: &Val) -> Result<Val, Fault> {
        let groups = self
            .groups
            .as_ref()
            .ok_or_else(|| Fault::thrown("IllegalStateException", "No match found"))?;
        let i = match key {
            Val::Int(i) => {
                usize::try_from(*i).map_err(|_| Fault::index(format!("No group {i}")))?
            }
            Val::Str(name) => self
                .pattern
                .group_index(name)
                .ok_or_else(|| Fault::arg(format!("No group with name <{name}>")))?,
            other => {
                return Err(Fault::arg(format!(
                    "`group` takes a number or a name, got a {}",
                    other.type_name()
                )))
            }
        };
        let g = groups
            .get(i)
            .ok_or_else(|| Fault::index(format!("No group {i}")))?;
        Ok(g.clone().map_or(Val::Null, Val::Str))
    }
}

/// The `DateTimeFormatter` constants a script may name.
pub fn formatter(name: &str) -> Option<Val> {
    const NAMES: [&str; 5] = [
        "ISO_OFFSET_DATE_TIME",
        "ISO_ZONED_DATE_TIME",
        "ISO_INSTANT",
        "ISO_LOCAL_DATE",
        "ISO_LOCAL_DATE_TIME",
    ];
    NAMES
        .iter()
        .find(|n| **n == name)
        .map(|n| obj(Obj::Formatter(n)))
}

/// A UTC instant as a formatter writes it: seconds always, the fraction only when it is not
/// zero (Java's ISO formatters print as many digits as the fraction needs).
pub fn format_date(ms: i64, formatter: &str) -> Result<String, Fault> {
    let t = chrono::DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| Fault::thrown("DateTimeException", "the date is out of range"))?;
    let millis = ms.rem_euclid(1000);
    let fraction = match millis {
        0 => String::new(),
        m if m % 100 == 0 => format!(".{}", m / 100),
        m if m % 10 == 0 => format!(".{:02}", m / 10),
        m => format!(".{m:03}"),
    };
    let date = t.format("%Y-%m-%d");
    let time = t.format("%H:%M:%S");
    Ok(match formatter {
        "ISO_LOCAL_DATE" => date.to_string(),
        "ISO_LOCAL_DATE_TIME" => format!("{date}T{time}{fraction}"),
        "ISO_ZONED_DATE_TIME" => format!("{date}T{time}{fraction}Z[UTC]"),
        // ISO_INSTANT writes the fraction in groups of three digits.
        "ISO_INSTANT" if millis != 0 => format!("{date}T{time}.{millis:03}Z"),
        _ => format!("{date}T{time}{fraction}Z"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_contains_as_elasticsearch_does() {
        let a = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(a.contains("10.1.2.3").unwrap());
        assert!(!a.contains("11.0.0.1").unwrap());
        assert!(!a.contains("::1").unwrap());
        let b = Cidr::parse("172.16.0.0/12").unwrap();
        assert!(b.contains("172.31.255.255").unwrap());
        assert!(!b.contains("172.32.0.0").unwrap());
        assert!(Cidr::parse("fd00::/8")
            .unwrap()
            .contains("fd12::1")
            .unwrap());
        assert!(Cidr::parse("0.0.0.0/0")
            .unwrap()
            .contains("8.8.8.8")
            .unwrap());
        assert!(a
            .contains("not-an-ip")
            .unwrap_err()
            .caught_by("IllegalArgumentException"));
        assert!(Cidr::parse("10.0.0.0/33").is_err());
    }

    #[test]
    fn tokenizer_skips_runs_of_delimiters() {
        let mut t = Tokenizer::new("..10.2..", ".");
        assert_eq!(t.count(), 2);
        assert_eq!(t.next_token().unwrap(), "10");
        assert!(t.has_more());
        assert_eq!(t.next_token().unwrap(), "2");
        assert!(!t.has_more());
        assert!(t.next_token().unwrap_err().caught_by("RuntimeException"));
    }

    #[test]
    fn iso_formats_print_the_fraction_java_prints() {
        assert_eq!(
            format_date(1_714_557_600_000, "ISO_OFFSET_DATE_TIME").unwrap(),
            "2024-05-01T10:00:00Z"
        );
        assert_eq!(
            format_date(1_714_557_600_120, "ISO_OFFSET_DATE_TIME").unwrap(),
            "2024-05-01T10:00:00.12Z"
        );
        assert_eq!(
            format_date(1_714_557_600_005, "ISO_INSTANT").unwrap(),
            "2024-05-01T10:00:00.005Z"
        );
    }
}
