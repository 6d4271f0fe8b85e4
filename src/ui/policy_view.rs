//! Text output of `opsai policy check`:
//!
//! ```text
//! rm -rf ~
//! risk: high  decision: ask
//!   - rm -rf ~: recursive delete
//! ```
//! When the sanitizer changed the input, the first line is the display form (removed characters
//! written as `\x1b`, `\u{202e}`) and a `runs as:` line shows exactly what would run.

use std::io::{self, Write};

use crate::policy::sanitize;
use crate::protocol::Assessment;
use crate::ui::style;

pub fn write(out: &mut impl Write, input: &str, assessment: &Assessment) -> io::Result<()> {
    if assessment.changed_by_sanitizer {
        let display = sanitize(input).display;
        let removed = style::removed();
        writeln!(out, "{removed}{display}{removed:#}")?;
        writeln!(out, "runs as: {}", assessment.sanitized)?;
    } else {
        writeln!(out, "{}", assessment.sanitized)?;
    }
    let risk = style::risk(assessment.risk);
    writeln!(out, "risk: {risk}{}{risk:#}  decision: {}", assessment.risk, assessment.decision)?;
    let dim = style::dim();
    for reason in &assessment.reasons {
        writeln!(out, "{dim}  -{dim:#} {}", super::display::line(reason))?;
    }
    Ok(())
}
