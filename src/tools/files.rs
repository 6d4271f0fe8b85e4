//! The file tools (seed 004): `read_file`, `write_file`, `edit_file`.

use super::Tool;

/// The file tools, in the order they are offered.
pub fn tools() -> Vec<Box<dyn Tool>> {
    Vec::new()
}
