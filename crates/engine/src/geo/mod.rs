//! Geometry: shapes (GeoJSON and WKT), grids (geotile, geohash) and their relations.

pub mod distance;
pub mod grid;
pub mod shape;

#[cfg(test)]
mod tests;
