//! `race --dashboard` and `show --dashboard`: a page served by runner while a race runs,
//! updated live by server-sent events, showing the race's report when it ends. Everything
//! the page needs is in it (no CDN, no font, nothing fetched but its own events).

mod hub;
mod page;
mod server;

pub use hub::Hub;
pub use server::start;
