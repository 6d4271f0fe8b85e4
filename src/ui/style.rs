//! The few styles opsai uses, so every view colors risk the same way.

use anstyle::{AnsiColor, Style};

use crate::protocol::Risk;

pub fn risk(risk: Risk) -> Style {
    match risk {
        Risk::Safe => AnsiColor::Green.on_default().bold(),
        Risk::Medium => AnsiColor::Yellow.on_default().bold(),
        Risk::High => AnsiColor::Red.on_default().bold(),
    }
}

/// Removed characters in a display form stand out from the command around them.
pub fn removed() -> Style {
    AnsiColor::Magenta.on_default().underline()
}

pub fn dim() -> Style {
    Style::new().dimmed()
}
