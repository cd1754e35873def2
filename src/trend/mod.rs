//! Trends across many races of one track and challenge: each task's metrics as a series in
//! race order, the change points in it (`edivisive`), and whether each is a regression given
//! the metric's direction.

pub mod edivisive;
mod student;
