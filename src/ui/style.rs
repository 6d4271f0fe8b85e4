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

pub(crate) fn dim() -> Style {
    Style::new().dimmed()
}

/// `text` in `style`, or plain when color is off.
pub(crate) fn paint(style: Style, text: &str, color: bool) -> String {
    if color { format!("{style}{text}{style:#}") } else { text.to_owned() }
}

/// `[HIGH]`, `[MEDIUM]`, `[SAFE]` in the risk's color: the one badge every view shows.
pub(crate) fn badge(risk: Risk, color: bool) -> String {
    paint(self::risk(risk), &format!("[{}]", risk.as_str().to_ascii_uppercase()), color)
}

pub fn success() -> Style {
    AnsiColor::Green.on_default()
}

pub fn warning() -> Style {
    AnsiColor::Yellow.on_default()
}

pub fn failure() -> Style {
    AnsiColor::Red.on_default()
}

pub fn action() -> Style {
    AnsiColor::Cyan.on_default().bold()
}
