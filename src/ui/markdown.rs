//! Markdown answers rendered for the terminal.
