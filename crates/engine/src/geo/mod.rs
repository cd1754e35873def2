//! geo_point fields beyond their two columns: shapes, grids, and the queries on them.

pub mod grid;
mod query;
pub mod shape;

pub use query::GEOHEX;

#[cfg(test)]
mod tests;
