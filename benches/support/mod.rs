//! Statistics shared by the benches (each bench is its own binary and includes this module).

#![allow(dead_code)]

/// The median (the upper one for an even count); NaN when there are no values.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The minimum and maximum.
pub fn spread(values: &[f64]) -> (f64, f64) {
    (values.iter().copied().fold(f64::INFINITY, f64::min), values.iter().copied().fold(0.0, f64::max))
}
