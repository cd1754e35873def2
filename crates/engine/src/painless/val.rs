//! A Painless value. Lists and maps are references, as Java's are: a map passed to a
//! function, put into another map or reached through `map.values()` is the same map, so a
//! change through one name is seen through all. A container never holds itself (a change
//! that would make a cycle is refused), and dropping a deep one is iterative, so neither a
//! cycle nor depth can leak memory or exhaust the stack.

use super::fault::Fault;
use serde_json::Value;
use std::cell::RefCell;
use std::rc::Rc;

/// How deep values nest when written out or compared (Elasticsearch's own
/// `index.mapping.depth.limit` is 20; a script nesting deeper is refused, not followed).
pub const MAX_NESTING: usize = 128;

#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(ListRef),
    /// In insertion order.
    Map(MapRef),
    /// A field's values in one document (`doc['f']`).
    Doc(Vec<Val>),
    /// A date's value (epoch milliseconds, UTC), as Painless's `ZonedDateTime`.
    Date(i64),
    /// A geo point: latitude, longitude.
    Geo(f64, f64),
    /// A geo_shape's value as a script sees it (`ScriptDocValues.Geometry`).
    Shape(Box<ShapeVal>),
    /// An object of a class the subset knows (a lambda, a CIDR, a tokenizer...).
    Obj(Rc<super::objects::Obj>),
}

/// What a script reads of a shape: its box, centroid and highest dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeVal {
    pub west: f64,
    pub east: f64,
    pub south: f64,
    pub north: f64,
    /// Latitude, longitude.
    pub centroid: (f64, f64),
    /// `POINT`, `LINE` or `POLYGON`.
    pub dimension: &'static str,
}

/// A list, shared by every name that reaches it; or a set (`new HashSet()`,
/// `Collectors.toSet()`), a list whose `add` keeps one of each value, in insertion order.
#[derive(Debug, Clone, Default)]
pub struct ListRef(pub Rc<RefCell<Vec<Val>>>, pub bool);

/// A map in insertion order, shared by every name that reaches it.
#[derive(Debug, Clone, Default)]
pub struct MapRef(pub Rc<RefCell<Vec<(String, Val)>>>);

impl PartialEq for ListRef {
    fn eq(&self, other: &Self) -> bool {
        equal_at(&Val::List(self.clone()), &Val::List(other.clone()), 0).unwrap_or(false)
    }
}

impl PartialEq for MapRef {
    fn eq(&self, other: &Self) -> bool {
        equal_at(&Val::Map(self.clone()), &Val::Map(other.clone()), 0).unwrap_or(false)
    }
}

impl ListRef {
    pub fn new(items: Vec<Val>) -> ListRef {
        ListRef(Rc::new(RefCell::new(items)), false)
    }
    /// A set of `items`, the first of equal values kept.
    pub fn set(items: Vec<Val>) -> Result<ListRef, Fault> {
        let mut kept: Vec<Val> = Vec::with_capacity(items.len());
        for v in items {
            if !contains(&kept, &v)? {
                kept.push(v);
            }
        }
        Ok(ListRef(Rc::new(RefCell::new(kept)), true))
    }
    pub fn is_set(&self) -> bool {
        self.1
    }
    /// Adds `v` (to a set, only when it holds no equal value); whether it was added.
    pub fn add(&self, v: Val) -> Result<bool, Fault> {
        refuse_cycle(&Val::List(self.clone()), &v)?;
        if self.1 && contains(&self.0.borrow(), &v)? {
            return Ok(false);
        }
        let mut items = self.0.borrow_mut();
        if items.len() >= super::lib::MAX_LEN {
            return Err(Fault::halt(format!(
                "a list of more than {} items",
                super::lib::MAX_LEN
            )));
        }
        items.push(v);
        Ok(true)
    }
    /// The items as they are now (a loop over them is not disturbed by changes it makes).
    pub fn snapshot(&self) -> Vec<Val> {
        self.0.borrow().clone()
    }
    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }
    pub fn same(&self, other: &ListRef) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl MapRef {
    pub fn new(entries: Vec<(String, Val)>) -> MapRef {
        MapRef(Rc::new(RefCell::new(entries)))
    }
    pub fn get(&self, key: &str) -> Option<Val> {
        self.0
            .borrow()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }
    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }
    pub fn same(&self, other: &MapRef) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
    /// Sets `key` (in place when it is there, else last), refusing a value that holds this
    /// map.
    pub fn put(&self, key: String, v: Val) -> Result<Val, Fault> {
        refuse_cycle(&Val::Map(self.clone()), &v)?;
        let mut m = self.0.borrow_mut();
        match m.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => Ok(std::mem::replace(&mut entry.1, v)),
            None => {
                m.push((key, v));
                Ok(Val::Null)
            }
        }
    }
    pub fn remove(&self, key: &str) -> Val {
        let mut m = self.0.borrow_mut();
        match m.iter().position(|(k, _)| k == key) {
            Some(i) => m.remove(i).1,
            None => Val::Null,
        }
    }
}

/// Values one run may walk checking for cycles (a script putting a large map into others in a
/// loop would otherwise take time its step bound does not see).
const CYCLE_CHECK_BUDGET: u64 = 10_000_000;

thread_local! {
    static CYCLE_CHECKS_LEFT: std::cell::Cell<u64> = const { std::cell::Cell::new(CYCLE_CHECK_BUDGET) };
}

/// A run starts with the whole budget of cycle checks.
pub fn reset_cycle_budget() {
    CYCLE_CHECKS_LEFT.with(|c| c.set(CYCLE_CHECK_BUDGET));
}

fn spend_cycle_check() -> Result<(), Fault> {
    CYCLE_CHECKS_LEFT.with(|c| match c.get() {
        0 => Err(Fault::halt(format!(
            "the script put values holding more than {CYCLE_CHECK_BUDGET} lists and maps into others"
        ))),
        n => {
            c.set(n - 1);
            Ok(())
        }
    })
}

/// Refuses to put `v` into `container` when `v` reaches `container` (Java would allow it,
/// and then fail writing it out; here it would also never be freed).
pub fn refuse_cycle(container: &Val, v: &Val) -> Result<(), Fault> {
    let target = match container {
        Val::List(l) => Rc::as_ptr(&l.0) as *const (),
        Val::Map(m) => Rc::as_ptr(&m.0) as *const (),
        _ => return Ok(()),
    };
    if !v.is_container() {
        return Ok(());
    }
    let mut stack = vec![v.clone()];
    while let Some(v) = stack.pop() {
        spend_cycle_check()?;
        match &v {
            Val::List(l) if Rc::as_ptr(&l.0) as *const () == target => {}
            Val::Map(m) if Rc::as_ptr(&m.0) as *const () == target => {}
            Val::List(l) => {
                stack.extend(l.0.borrow().iter().filter(|v| v.is_container()).cloned());
                continue;
            }
            Val::Map(m) => {
                stack.extend(
                    m.0.borrow()
                        .iter()
                        .filter(|(_, v)| v.is_container())
                        .map(|(_, v)| v.clone()),
                );
                continue;
            }
            _ => continue,
        }
        return Err(Fault::arg(
            "a map or list cannot hold itself (the change would make a cycle)",
        ));
    }
    Ok(())
}

/// A deep list or map is freed with a loop, not a recursion (a script can nest one as deep
/// as its steps allow).
impl Drop for ListRef {
    fn drop(&mut self) {
        if Rc::strong_count(&self.0) == 1 {
            if let Ok(mut items) = self.0.try_borrow_mut() {
                free_iteratively(std::mem::take(&mut *items));
            }
        }
    }
}

impl Drop for MapRef {
    fn drop(&mut self) {
        if Rc::strong_count(&self.0) == 1 {
            if let Ok(mut entries) = self.0.try_borrow_mut() {
                free_iteratively(
                    std::mem::take(&mut *entries)
                        .into_iter()
                        .map(|e| e.1)
                        .collect(),
                );
            }
        }
    }
}

fn free_iteratively(mut stack: Vec<Val>) {
    while let Some(v) = stack.pop() {
        match v {
            Val::List(l) if Rc::strong_count(&l.0) == 1 => {
                if let Ok(mut items) = l.0.try_borrow_mut() {
                    stack.append(&mut items);
                }
            }
            Val::Map(m) if Rc::strong_count(&m.0) == 1 => {
                if let Ok(mut entries) = m.0.try_borrow_mut() {
                    stack.extend(entries.drain(..).map(|e| e.1));
                }
            }
            _ => {}
        }
    }
}

impl Val {
    pub fn list(items: Vec<Val>) -> Val {
        Val::List(ListRef::new(items))
    }

    pub fn map(entries: Vec<(String, Val)>) -> Val {
        Val::Map(MapRef::new(entries))
    }

    pub fn is_container(&self) -> bool {
        matches!(self, Val::List(_) | Val::Map(_))
    }

    pub fn from_json(v: &Value) -> Val {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Val::Int(i),
                None => Val::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Val::Str(s.clone()),
            Value::Array(a) => Val::list(a.iter().map(Val::from_json).collect()),
            Value::Object(o) => Val::map(
                o.iter()
                    .map(|(k, v)| (k.clone(), Val::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The value as JSON (a lambda or other object has no JSON form: an error naming it).
    pub fn to_json(&self) -> Result<Value, Fault> {
        self.json_at(0)
    }

    fn json_at(&self, depth: usize) -> Result<Value, Fault> {
        if depth > MAX_NESTING {
            return Err(Fault::halt(format!(
                "a value nested more than {MAX_NESTING} deep"
            )));
        }
        Ok(match self {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Int(i) => Value::from(*i),
            Val::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Val::Str(s) => Value::String(s.clone()),
            Val::List(l) => Value::Array(
                l.0.borrow()
                    .iter()
                    .map(|v| v.json_at(depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Val::Doc(l) => Value::Array(
                l.iter()
                    .map(|v| v.json_at(depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Val::Map(m) => Value::Object(
                m.0.borrow()
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), v.json_at(depth + 1)?)))
                    .collect::<Result<_, Fault>>()?,
            ),
            Val::Date(ms) => Value::String(crate::zone::Zone::utc().format(*ms)),
            Val::Geo(lat, lon) => serde_json::json!({"lat": lat, "lon": lon}),
            Val::Shape(s) => serde_json::json!({"type": "envelope",
                "coordinates": [[s.west, s.north], [s.east, s.south]]}),
            Val::Obj(o) => o.to_json()?,
        })
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(*i as f64),
            Val::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "boolean",
            Val::Int(_) => "long",
            Val::Float(_) => "double",
            Val::Str(_) => "String",
            Val::List(_) => "List",
            Val::Map(_) => "Map",
            Val::Doc(_) => "ScriptDocValues",
            Val::Date(_) => "ZonedDateTime",
            Val::Geo(..) => "GeoPoint",
            Val::Shape(_) => "GeoShapeValue",
            Val::Obj(o) => o.class(),
        }
    }

    /// `v instanceof class`, for the classes a script can name.
    pub fn instance_of(&self, class: &str) -> Result<bool, String> {
        let is = match class {
            "Object" | "def" => !matches!(self, Val::Null),
            "Map" | "HashMap" | "LinkedHashMap" | "TreeMap" => matches!(self, Val::Map(_)),
            "List" | "ArrayList" | "LinkedList" => {
                matches!(self, Val::List(l) if !l.is_set()) || matches!(self, Val::Doc(_))
            }
            "Set" | "HashSet" | "TreeSet" => matches!(self, Val::List(l) if l.is_set()),
            "Collection" | "Iterable" => matches!(self, Val::List(_) | Val::Doc(_)),
            "String" | "CharSequence" => matches!(self, Val::Str(_)),
            "Number" => matches!(self, Val::Int(_) | Val::Float(_)),
            "Integer" | "Long" | "int" | "long" => matches!(self, Val::Int(_)),
            "Double" | "Float" | "double" | "float" => matches!(self, Val::Float(_)),
            "Boolean" | "boolean" => matches!(self, Val::Bool(_)),
            "ZonedDateTime" => matches!(self, Val::Date(_)),
            other => match self {
                Val::Obj(o) => o.class() == other,
                _ if super::objects::CLASSES.contains(&other) => false,
                _ => {
                    return Err(format!(
                        "`instanceof {other}`: `{other}` is not a class of the engine's Painless subset"
                    ))
                }
            },
        };
        Ok(is)
    }
}

pub fn contains(items: &[Val], v: &Val) -> Result<bool, Fault> {
    for item in items {
        if equal(item, v)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Java's `equals` (and Painless's `==`): numbers by value, lists and maps by content.
pub fn equal(a: &Val, b: &Val) -> Result<bool, Fault> {
    equal_at(a, b, 0)
}

fn equal_at(a: &Val, b: &Val, depth: usize) -> Result<bool, Fault> {
    if depth > MAX_NESTING {
        return Err(Fault::halt(format!(
            "values nested more than {MAX_NESTING} deep compared"
        )));
    }
    Ok(match (a, b) {
        (Val::List(x), Val::List(y)) if x.same(y) => true,
        (Val::Map(x), Val::Map(y)) if x.same(y) => true,
        (Val::List(x), Val::List(y)) => {
            let (x, y) = (x.0.borrow(), y.0.borrow());
            x.len() == y.len() && {
                let mut all = true;
                for (p, q) in x.iter().zip(y.iter()) {
                    if !equal_at(p, q, depth + 1)? {
                        all = false;
                        break;
                    }
                }
                all
            }
        }
        (Val::Map(x), Val::Map(y)) => {
            let (x, y) = (x.0.borrow(), y.0.borrow());
            x.len() == y.len() && {
                let mut all = true;
                for (k, v) in x.iter() {
                    let same = match y.iter().find(|(k2, _)| k2 == k) {
                        Some((_, w)) => equal_at(v, w, depth + 1)?,
                        None => false,
                    };
                    if !same {
                        all = false;
                        break;
                    }
                }
                all
            }
        }
        (Val::Obj(x), Val::Obj(y)) => Rc::ptr_eq(x, y),
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (a, b) {
                (Val::Str(x), Val::Str(y)) => x == y,
                (Val::Null, Val::Null) => true,
                (Val::Bool(x), Val::Bool(y)) => x == y,
                (Val::Date(x), Val::Date(y)) => x == y,
                (Val::Geo(a1, o1), Val::Geo(a2, o2)) => a1 == a2 && o1 == o2,
                (Val::Doc(x), Val::Doc(y)) => x == y,
                (Val::Shape(x), Val::Shape(y)) => x == y,
                _ => false,
            },
        },
    })
}
