//! Lists (and sets), maps, their views and streams: the methods that take no lambda. A
//! change is made where the list or map is, so every name reaching it sees it.

use super::{index, key_text, position, MAX_LEN};
use crate::painless::fault::Fault;
use crate::painless::objects::{obj, Obj, View};
use crate::painless::val::{contains, equal, refuse_cycle, ListRef, MapRef, Val};

fn list_arg<'a>(args: &'a [Val], name: &str) -> Result<Vec<Val>, Fault> {
    match args.first() {
        Some(Val::List(l)) => Ok(l.snapshot()),
        Some(Val::Doc(l)) => Ok(l.clone()),
        Some(Val::Obj(o)) => match o.items()? {
            Val::List(l) => Ok(l.snapshot()),
            _ => Ok(Vec::new()),
        },
        Some(Val::Null) => Err(Fault::npe(format!("`{name}` of null"))),
        _ => Err(Fault::cast(format!("`{name}` takes a collection"))),
    }
}

/// A list's method; None when lists have no such method here.
pub fn list_method(l: &ListRef, name: &str, args: &[Val]) -> Option<Result<Val, Fault>> {
    Some((|| -> Result<Val, Fault> {
        Ok(match (name, args) {
            ("size", []) => Val::Int(l.len() as i64),
            ("isEmpty", []) => Val::Bool(l.is_empty()),
            ("contains", [v]) => Val::Bool(contains(&l.0.borrow(), v)?),
            ("containsAll", [_]) => {
                let items = l.snapshot();
                let mut all = true;
                for v in list_arg(args, name)? {
                    all &= contains(&items, &v)?;
                }
                Val::Bool(all)
            }
            ("get", [i]) if !l.is_set() => index(&Val::List(l.clone()), i)?,
            ("indexOf" | "lastIndexOf", [v]) => {
                let items = l.snapshot();
                let mut found = -1;
                for (i, item) in items.iter().enumerate() {
                    if equal(item, v)? {
                        found = i as i64;
                        if name == "indexOf" {
                            break;
                        }
                    }
                }
                Val::Int(found)
            }
            ("stream", []) => obj(Obj::Stream(l.snapshot())),
            _ => return list_change(l, name, args),
        })
    })())
    .and_then(none_when_unknown)
}

/// A list's methods that change it.
fn list_change(l: &ListRef, name: &str, args: &[Val]) -> Result<Val, Fault> {
    Ok(match (name, args) {
        ("add", [v]) => Val::Bool(l.add(v.clone())?),
        ("add", [Val::Int(i), v]) if !l.is_set() => {
            refuse_cycle(&Val::List(l.clone()), v)?;
            let mut items = l.0.borrow_mut();
            let at = usize::try_from(*i)
                .ok()
                .filter(|at| *at <= items.len())
                .ok_or_else(|| super::out_of_bounds(*i, items.len()))?;
            items.insert(at, v.clone());
            Val::Null
        }
        ("addAll", [_]) => {
            let more = list_arg(args, name)?;
            if l.len() + more.len() > MAX_LEN {
                return Err(Fault::halt(format!("a list of more than {MAX_LEN} items")));
            }
            let mut changed = false;
            for v in more {
                changed |= l.add(v)?;
            }
            Val::Bool(changed)
        }
        // A list's `remove` of a whole number removes at that index, as Java's
        // remove(int); a set's removes the value.
        ("remove", [Val::Int(i)]) if !l.is_set() => {
            let mut items = l.0.borrow_mut();
            let at = position(*i, items.len())?;
            items.remove(at)
        }
        ("remove", [v]) => {
            let at = l
                .snapshot()
                .iter()
                .position(|x| equal(x, v).unwrap_or(false));
            match at {
                Some(at) => {
                    l.0.borrow_mut().remove(at);
                    Val::Bool(true)
                }
                None => Val::Bool(false),
            }
        }
        ("removeAll", [_]) => {
            let gone = list_arg(args, name)?;
            let kept: Vec<Val> = l
                .snapshot()
                .into_iter()
                .filter(|v| !contains(&gone, v).unwrap_or(false))
                .collect();
            let changed = kept.len() != l.len();
            *l.0.borrow_mut() = kept;
            Val::Bool(changed)
        }
        ("clear", []) => {
            l.0.borrow_mut().clear();
            Val::Null
        }
        ("set", [Val::Int(i), v]) if !l.is_set() => {
            refuse_cycle(&Val::List(l.clone()), v)?;
            let mut items = l.0.borrow_mut();
            let at = position(*i, items.len())?;
            std::mem::replace(&mut items[at], v.clone())
        }
        ("sort", [] | [Val::Null]) => {
            let sorted = natural_sort(l.snapshot())?;
            *l.0.borrow_mut() = sorted;
            Val::Null
        }
        ("subList", [Val::Int(a), Val::Int(b)]) => {
            let items = l.snapshot();
            if *a < 0 || a > b || *b as usize > items.len() {
                return Err(Fault::index(format!(
                    "fromIndex {a}, toIndex {b}, size {}",
                    items.len()
                )));
            }
            Val::list(items[*a as usize..*b as usize].to_vec())
        }
        _ => return Err(Fault::halt(String::new())),
    })
}

/// A map's method; None when maps have no such method here.
pub fn map_method(m: &MapRef, name: &str, args: &[Val]) -> Option<Result<Val, Fault>> {
    Some((|| -> Result<Val, Fault> {
        Ok(match (name, args) {
            ("size", []) => Val::Int(m.len() as i64),
            ("isEmpty", []) => Val::Bool(m.is_empty()),
            ("containsKey", [k]) => Val::Bool(match k {
                Val::Str(k) => m.get(k).is_some(),
                _ => false,
            }),
            ("containsValue", [v]) => {
                let values: Vec<Val> = m.0.borrow().iter().map(|(_, v)| v.clone()).collect();
                Val::Bool(contains(&values, v)?)
            }
            ("get", [k]) => match k {
                Val::Str(k) => m.get(k).unwrap_or(Val::Null),
                _ => Val::Null,
            },
            ("getOrDefault", [k, default]) => match k {
                Val::Str(k) => m.get(k).unwrap_or_else(|| default.clone()),
                _ => default.clone(),
            },
            ("put", [k, v]) => m.put(key_text(k)?, v.clone())?,
            ("putIfAbsent", [k, v]) => {
                let k = key_text(k)?;
                match m.get(&k) {
                    Some(old) if old != Val::Null => old,
                    _ => m.put(k, v.clone())?,
                }
            }
            ("putAll", [Val::Map(more)]) => {
                let entries = more.0.borrow().clone();
                for (k, v) in entries {
                    m.put(k, v)?;
                }
                Val::Null
            }
            ("remove", [k]) => match k {
                Val::Str(k) => m.remove(k),
                _ => Val::Null,
            },
            ("clear", []) => {
                m.0.borrow_mut().clear();
                Val::Null
            }
            ("keySet", []) => obj(Obj::View(m.clone(), View::Keys)),
            ("values", []) => obj(Obj::View(m.clone(), View::Values)),
            ("entrySet", []) => obj(Obj::View(m.clone(), View::Entries)),
            _ => return Err(Fault::halt(String::new())),
        })
    })())
    .and_then(none_when_unknown)
}

/// A view's method (`keySet()`, `values()`, `entrySet()`): `remove` changes the map; the
/// others read the view's items.
pub fn view_method(m: &MapRef, view: View, name: &str, args: &[Val]) -> Option<Result<Val, Fault>> {
    match (view, name, args) {
        (View::Keys, "remove", [Val::Str(k)]) => {
            let had = m.get(k).is_some();
            m.remove(k);
            Some(Ok(Val::Bool(had)))
        }
        (_, "size", []) => Some(Ok(Val::Int(m.len() as i64))),
        (_, "isEmpty", []) => Some(Ok(Val::Bool(m.is_empty()))),
        (_, "contains" | "containsAll" | "stream" | "toString" | "equals", _) => {
            let items = obj(Obj::View(m.clone(), view));
            let Val::Obj(o) = &items else { return None };
            match o.items() {
                Ok(Val::List(l)) => list_method(&l, name, args),
                Ok(_) => None,
                Err(e) => Some(Err(e)),
            }
        }
        _ => None,
    }
}

/// A map entry's method.
pub fn entry_method(m: &MapRef, key: &str, name: &str, args: &[Val]) -> Option<Result<Val, Fault>> {
    match (name, args) {
        ("getKey", []) => Some(Ok(Val::Str(key.to_string()))),
        ("getValue", []) => Some(Ok(m.get(key).unwrap_or(Val::Null))),
        ("setValue", [v]) => Some(m.put(key.to_string(), v.clone())),
        _ => None,
    }
}

/// A stream's method that takes no lambda.
pub fn stream_method(items: &[Val], name: &str, args: &[Val]) -> Option<Result<Val, Fault>> {
    let r = (|| -> Result<Val, Fault> {
        Ok(match (name, args) {
            ("distinct", []) => {
                let mut kept: Vec<Val> = Vec::new();
                for v in items {
                    if !contains(&kept, v)? {
                        kept.push(v.clone());
                    }
                }
                obj(Obj::Stream(kept))
            }
            ("sorted", []) => obj(Obj::Stream(natural_sort(items.to_vec())?)),
            ("limit", [Val::Int(n)]) => obj(Obj::Stream(
                items.iter().take((*n).max(0) as usize).cloned().collect(),
            )),
            ("skip", [Val::Int(n)]) => obj(Obj::Stream(
                items.iter().skip((*n).max(0) as usize).cloned().collect(),
            )),
            ("count", []) => Val::Int(items.len() as i64),
            ("toList", []) => Val::list(items.to_vec()),
            ("collect", [Val::Obj(c)]) => match &**c {
                Obj::Collector(false) => Val::list(items.to_vec()),
                Obj::Collector(true) => Val::List(ListRef::set(items.to_vec())?),
                other => {
                    return Err(Fault::cast(format!(
                        "`collect` takes a Collectors.toList() or toSet(), got a {}",
                        other.class()
                    )))
                }
            },
            _ => return Err(Fault::halt(String::new())),
        })
    })();
    none_when_unknown(r)
}

fn none_when_unknown(r: Result<Val, Fault>) -> Option<Result<Val, Fault>> {
    match r {
        Err(Fault::Halt(e)) if e.is_empty() => None,
        other => Some(other),
    }
}

/// Java's natural order: numbers by value, strings by their characters; nulls and mixed
/// kinds cannot be compared.
pub fn natural_sort(mut items: Vec<Val>) -> Result<Vec<Val>, Fault> {
    let numbers = items.iter().all(|v| v.as_f64().is_some());
    let strings = items.iter().all(|v| matches!(v, Val::Str(_)));
    if !numbers && !strings {
        return Err(Fault::cast(
            "only numbers or only strings sort in their natural order",
        ));
    }
    items.sort_by(|a, b| match (a, b) {
        (Val::Str(x), Val::Str(y)) => x.cmp(y),
        _ => a
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&b.as_f64().unwrap_or(0.0)),
    });
    Ok(items)
}
