//! Ops-object analysis and the template cache through the real binary.
