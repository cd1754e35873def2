//! The dashboard page: one file, its styles and script inline.

pub const PAGE: &str = include_str!("page.html");
