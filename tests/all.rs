//! The one integration-test binary (DESIGN §1): every suite drives the real `opsai` binary.
//! One binary keeps link time down; `support` holds the shared fixtures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
mod support;
