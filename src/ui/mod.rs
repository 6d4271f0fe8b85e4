//! Rendering for the terminal. Writers take `impl Write` so colors are decided by the caller's
//! stream (anstream strips them for `NO_COLOR` and non-terminals).

pub mod approve;
pub mod display;
pub mod live;
pub mod markdown;
pub mod policy_view;
pub mod render;
pub mod sessions_view;
pub mod style;
