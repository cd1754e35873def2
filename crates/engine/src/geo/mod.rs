//! Geometry: shapes (GeoJSON and WKT), grids (geotile, geohash) and their relations.

pub mod codec;
pub mod column;
pub mod distance;
pub mod geometry;
pub mod grid;
pub mod relate;
pub mod shape;

#[cfg(test)]
mod tests;
