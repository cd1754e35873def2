//! Geo queries on geo_shape fields: `geo_shape` (its four relations), `geo_bounding_box`,
//! `geo_distance` and `geo_grid`, each a shape the documents' shapes intersect (or stand in
//! a relation to). The indexed box columns narrow the candidates; each candidate's shape is
//! then tested exactly (`geo::relate`).

use crate::dsl::scoring::{DocFn, FnQuery, SegmentFn};
use crate::dsl::QueryCompiler;
use crate::geo::column::{ShapeColumn, SIDES};
use crate::geo::relate::Target;
use crate::geo::shape::{Bounds, Relation};
use crate::mapping::{FieldRef, FieldType, MappedField};
use std::ops::Bound;
use std::sync::Arc;
use tantivy::query::{BooleanQuery, ConstScoreQuery, ExistsQuery, Occur, Query, RangeQuery};
use tantivy::{DocId, Score, SegmentReader, Term};

#[derive(Debug)]
struct ShapeFilter {
    field: String,
    target: Arc<Target>,
    relation: Relation,
}

impl DocFn for ShapeFilter {
    fn bind(&self, reader: &SegmentReader) -> tantivy::Result<Box<dyn SegmentFn>> {
        struct Bound {
            shapes: ShapeColumn,
            target: Arc<Target>,
            relation: Relation,
        }
        impl SegmentFn for Bound {
            fn eval(&mut self, doc: DocId, _: Score) -> Option<Score> {
                let shape = self.shapes.get(doc)?;
                self.target.test(&shape, self.relation).then_some(1.0)
            }
        }
        Ok(Box::new(Bound {
            shapes: ShapeColumn::open(reader, &self.field)?,
            target: self.target.clone(),
            relation: self.relation,
        }))
    }
}

impl QueryCompiler<'_> {
    /// The field, when it is a geo_shape one.
    pub(crate) fn shape_field(&self, name: &str) -> Option<&MappedField> {
        match self.mapping.field(name) {
            Some(FieldRef::Mapped(f)) if f.kind == FieldType::GeoShape => Some(f),
            _ => None,
        }
    }

    /// The documents whose shape stands in `relation` to `target`.
    pub(crate) fn shape_query(
        &self,
        f: &MappedField,
        target: Target,
        relation: Relation,
    ) -> Box<dyn Query> {
        let column = |side: &str| format!("{}.{side}", f.name);
        let field = |side: &str| self.mapping.schema.get_field(&column(side)).ok();
        let b = target.bounds();
        // Each side's bound (a box's side below or above a value): a shape in the relation
        // has a box that passes every one.
        let sides: Vec<(&str, Bound<f64>, Bound<f64>)> = match relation {
            Relation::Intersects | Relation::Contains => vec![
                ("west", Bound::Unbounded, Bound::Included(b.east)),
                ("east", Bound::Included(b.west), Bound::Unbounded),
                ("south", Bound::Unbounded, Bound::Included(b.north)),
                ("north", Bound::Included(b.south), Bound::Unbounded),
            ],
            Relation::Within => vec![
                ("west", Bound::Included(b.west), Bound::Unbounded),
                ("east", Bound::Unbounded, Bound::Included(b.east)),
                ("south", Bound::Included(b.south), Bound::Unbounded),
                ("north", Bound::Unbounded, Bound::Included(b.north)),
            ],
            Relation::Disjoint => vec![],
        };
        let mut must: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (side, lo, hi) in sides {
            let Some(field) = field(side) else { continue };
            let term = |x: f64| Term::from_field_f64(field, x);
            must.push((
                Occur::Must,
                Box::new(RangeQuery::new(lo.map(term), hi.map(term))),
            ));
        }
        if must.is_empty() {
            must.push((
                Occur::Must,
                Box::new(ExistsQuery::new(column(SIDES[0]), false)),
            ));
        }
        let candidates = Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(must)), 1.0));
        Box::new(FnQuery::new(
            candidates,
            Arc::new(ShapeFilter {
                field: f.name.clone(),
                target: Arc::new(target),
                relation,
            }),
        ))
    }

    /// A box query on a shape field: the shapes that intersect the box.
    pub(crate) fn shape_in_box(&self, f: &MappedField, b: Bounds) -> Box<dyn Query> {
        let target = Target::Geometry(crate::geo::geometry::envelope_geometry(&b));
        self.shape_query(f, target, Relation::Intersects)
    }
}
