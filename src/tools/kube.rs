//! Read-only Kubernetes tools (seed 002 §4.4–§5) through kubectl.

use super::Tool;

/// The Kubernetes tools, in the order they are offered.
pub fn tools() -> Vec<Box<dyn Tool>> {
    Vec::new()
}
