//! Methods that take a lambda: `removeIf` (on lists, and on a map's views, which changes the
//! map), `forEach`, `sort` with a comparator, `computeIfAbsent`, and a stream's `filter`,
//! `map`, `anyMatch`, `allMatch`, `noneMatch`, `sorted`, `forEach`.

use super::{Fault, Run};
use crate::painless::objects::{obj, Obj, View};
use crate::painless::val::{ListRef, MapRef, Val};

impl Run<'_> {
    pub(super) fn higher(&mut self, base: &Val, name: &str, args: Vec<Val>) -> Result<Val, Fault> {
        let [f] = args.as_slice() else {
            return match (base, name, args.as_slice()) {
                (Val::Map(m), "computeIfAbsent", [k, f]) => self.compute_if_absent(m, k, f),
                _ => Err(no_such(base, name)),
            };
        };
        match (base, name) {
            (Val::List(l), "removeIf") => self.remove_from_list(l, f),
            (Val::List(l), "forEach") => {
                for v in l.snapshot() {
                    self.apply(f, vec![v])?;
                }
                Ok(Val::Null)
            }
            (Val::List(l), "sort") => {
                let sorted = self.sort_by(l.snapshot(), f)?;
                *l.0.borrow_mut() = sorted;
                Ok(Val::Null)
            }
            (Val::Map(m), "forEach") => {
                let entries = m.0.borrow().clone();
                for (k, v) in entries {
                    self.apply(f, vec![Val::Str(k), v])?;
                }
                Ok(Val::Null)
            }
            (Val::Obj(o), _) => match (&**o, name) {
                (Obj::View(m, view), "removeIf") => self.remove_from_map(m, *view, f),
                (Obj::View(..), _) => {
                    let items = o.items()?;
                    self.higher(&items, name, args)
                }
                (Obj::Stream(items), _) => self.stream(items.clone(), name, f),
                _ => Err(no_such(base, name)),
            },
            _ => Err(no_such(base, name)),
        }
    }

    fn apply(&mut self, f: &Val, args: Vec<Val>) -> Result<Val, Fault> {
        match f {
            Val::Obj(o) => match &**o {
                Obj::Lambda(l) => {
                    let l = l.clone();
                    self.call_lambda(&l, args)
                }
                other => Err(Fault::cast(format!(
                    "a {} is not a function",
                    other.class()
                ))),
            },
            other => Err(Fault::cast(format!(
                "a {} is not a function",
                other.type_name()
            ))),
        }
    }

    fn test(&mut self, f: &Val, v: Val) -> Result<bool, Fault> {
        match self.apply(f, vec![v])? {
            Val::Bool(b) => Ok(b),
            other => Err(Fault::cast(format!(
                "a predicate returned a {}, not a boolean",
                other.type_name()
            ))),
        }
    }

    fn remove_from_list(&mut self, l: &ListRef, f: &Val) -> Result<Val, Fault> {
        let items = l.snapshot();
        let mut kept = Vec::with_capacity(items.len());
        for v in &items {
            if !self.test(f, v.clone())? {
                kept.push(v.clone());
            }
        }
        if l.len() != items.len() {
            return Err(Fault::thrown(
                "ConcurrentModificationException",
                "the list changed while removeIf ran",
            ));
        }
        let removed = kept.len() != items.len();
        *l.0.borrow_mut() = kept;
        Ok(Val::Bool(removed))
    }

    /// `map.values().removeIf(...)` (and keySet's, entrySet's): the map's entries go.
    fn remove_from_map(&mut self, m: &MapRef, view: View, f: &Val) -> Result<Val, Fault> {
        let entries = m.0.borrow().clone();
        let mut gone = Vec::new();
        for (k, v) in entries {
            let item = match view {
                View::Keys => Val::Str(k.clone()),
                View::Values => v,
                View::Entries => obj(Obj::Entry(m.clone(), k.clone())),
            };
            if self.test(f, item)? {
                gone.push(k);
            }
        }
        for k in &gone {
            m.remove(k);
        }
        Ok(Val::Bool(!gone.is_empty()))
    }

    fn compute_if_absent(&mut self, m: &MapRef, k: &Val, f: &Val) -> Result<Val, Fault> {
        let key = crate::painless::lib::key_text(k)?;
        if let Some(v) = m.get(&key).filter(|v| *v != Val::Null) {
            return Ok(v);
        }
        let v = self.apply(f, vec![k.clone()])?;
        if v != Val::Null {
            m.put(key, v.clone())?;
        }
        Ok(v)
    }

    /// A stable merge sort (as Java's is stable) whose comparator is script code that may
    /// fail, which a std sort's closure could not return.
    fn sort_by(&mut self, items: Vec<Val>, f: &Val) -> Result<Vec<Val>, Fault> {
        if items.len() <= 1 {
            return Ok(items);
        }
        let mut left = items;
        let right = left.split_off(left.len() / 2);
        let (left, right) = (self.sort_by(left, f)?, self.sort_by(right, f)?);
        let mut out = Vec::with_capacity(left.len() + right.len());
        let (mut l, mut r) = (left.into_iter().peekable(), right.into_iter().peekable());
        while let (Some(a), Some(b)) = (l.peek(), r.peek()) {
            let order = match self.apply(f, vec![a.clone(), b.clone()])? {
                Val::Int(n) => n,
                other => {
                    return Err(Fault::cast(format!(
                        "a comparator returned a {}, not an int",
                        other.type_name()
                    )))
                }
            };
            let next = if order <= 0 { l.next() } else { r.next() };
            out.extend(next);
        }
        out.extend(l);
        out.extend(r);
        Ok(out)
    }

    fn stream(&mut self, items: Vec<Val>, name: &str, f: &Val) -> Result<Val, Fault> {
        Ok(match name {
            "filter" => {
                let mut kept = Vec::new();
                for v in items {
                    if self.test(f, v.clone())? {
                        kept.push(v);
                    }
                }
                obj(Obj::Stream(kept))
            }
            "map" => {
                let mut out = Vec::with_capacity(items.len());
                for v in items {
                    out.push(self.apply(f, vec![v])?);
                }
                obj(Obj::Stream(out))
            }
            "anyMatch" | "allMatch" | "noneMatch" => {
                let mut hits = 0;
                let n = items.len();
                for v in items {
                    if self.test(f, v)? {
                        hits += 1;
                        if name != "allMatch" {
                            break;
                        }
                    } else if name == "allMatch" {
                        break;
                    }
                }
                Val::Bool(match name {
                    "anyMatch" => hits > 0,
                    "allMatch" => hits == n,
                    _ => hits == 0,
                })
            }
            "forEach" => {
                for v in items {
                    self.apply(f, vec![v])?;
                }
                Val::Null
            }
            "sorted" => obj(Obj::Stream(self.sort_by(items, f)?)),
            _ => return Err(no_such(&obj(Obj::Stream(Vec::new())), name)),
        })
    }
}

fn no_such(base: &Val, name: &str) -> Fault {
    Fault::arg(format!(
        "a {} has no method `{name}` taking a lambda in the engine's Painless subset",
        base.type_name()
    ))
}
