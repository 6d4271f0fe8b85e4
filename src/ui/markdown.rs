//! Markdown answers rendered for the terminal.
//!
//! termimad draws headings, emphasis, lists, tables and code blocks; this module decides what it is given
//! and how it wraps. The answer comes from a model that has read untrusted command output, so it is
//! sanitized first (escape sequences, controls, bidi and zero-width characters removed). Code lines are
//! never wrapped or padded, so a copied command is the command that was written.

use std::panic::{self, AssertUnwindSafe};
use std::sync::OnceLock;

use termimad::crossterm::style::{Attribute, Color};
use termimad::minimad::{self, Alignment, Compound, Options};
use termimad::{
    CompositeKind, CompoundStyle, FmtComposite, FmtLine, FmtTableRule, FmtText, LineStyle, MadSkin, RelativePosition,
    StyledChar,
};

use crate::policy::sanitize;

/// Narrower than this, tables and wrapped lists stop being readable.
const MIN_WIDTH: usize = 20;

/// Wider than any terminal: a horizontal rule is drawn across the whole width.
const MAX_WIDTH: usize = 1000;

/// Tabs are expanded to this many columns: termimad counts a tab as zero columns.
const TAB_STOP: usize = 4;

/// Left indent of code block lines, outside their background.
const CODE_INDENT: usize = 2;

/// termimad's narrowest table column.
const MIN_COLUMN: usize = 3;

/// The answer as the terminal should show it: styled Markdown wrapped to `width` when `color`, else the
/// text itself (Markdown source is the most readable plain form), in both cases with control characters removed.
pub fn render(markdown: &str, width: usize, color: bool) -> String {
    let clean = sanitize(markdown).text;
    if clean.trim().is_empty() {
        return String::new();
    }
    if !color {
        return plain(&clean);
    }
    let source = normalize(&clean);
    let width = width.clamp(MIN_WIDTH, MAX_WIDTH);
    // termimad asserts its own invariants with panics; a surprising answer must not end the session.
    panic::catch_unwind(AssertUnwindSafe(|| styled(&source, width))).unwrap_or_else(|_| plain(&clean))
}

/// The sanitized source with trailing whitespace trimmed and one final newline.
fn plain(clean: &str) -> String {
    format!("{}\n", clean.trim_end())
}

/// Lays the Markdown out like `FmtText::from` does, except that code lines are left whole (termimad would
/// wrap them at spaces) and tables get a top and bottom border and padded cells.
fn styled(source: &str, width: usize) -> String {
    let skin = skin();
    let parsed = minimad::parse_text(source, Options::default());
    let lines: Vec<FmtLine<'_>> = parsed.lines.into_iter().map(|line| FmtLine::from(line, skin)).collect();
    let lines = wrap_prose(lay_out_tables(lines, width, skin), width, skin);
    let text = FmtText { skin, lines, width: Some(width) };
    // Blank code lines are their indent alone; nothing else ends in unstyled spaces.
    let mut out = String::with_capacity(source.len() * 2);
    for line in text.to_string().trim_end().lines() {
        out.push_str(line.trim_end_matches(' '));
        out.push('\n');
    }
    out
}

fn skin() -> &'static MadSkin {
    static SKIN: OnceLock<MadSkin> = OnceLock::new();
    SKIN.get_or_init(build_skin)
}

/// Cyan bold headings (the house `action` color, ANSI 6), yellow inline code, code blocks on a dark background,
/// bordered tables and `•` bullets.
fn build_skin() -> MadSkin {
    let mut skin = MadSkin::default();
    for header in &mut skin.headers {
        *header =
            LineStyle::new(CompoundStyle::new(Some(Color::DarkCyan), None, Attribute::Bold.into()), Alignment::Left);
    }
    skin.headers[0].add_attr(Attribute::Underlined);
    skin.inline_code = CompoundStyle::with_fgbg(Color::Yellow, termimad::gray(3));
    skin.code_block = LineStyle::new(CompoundStyle::with_fgbg(termimad::gray(20), termimad::gray(3)), Alignment::Left);
    skin.code_block.left_margin = CODE_INDENT;
    skin.bullet = StyledChar::from_fg_char(Color::DarkCyan, '•');
    for item in &mut skin.ordered_item_styles {
        item.index_style = CompoundStyle::with_fg(Color::DarkCyan);
        item.index_suffix = StyledChar::from_fg_char(Color::DarkCyan, '.');
    }
    skin.table = CompoundStyle::with_fg(termimad::gray(10)).into();
    skin
}

/// Expands tabs and turns fences minimad would miss (indented under a list item, or `~~~`) into plain
/// ```` ``` ```` fences at the line start, with the code dedented by the fence's indent.
fn normalize(clean: &str) -> String {
    let mut out = String::with_capacity(clean.len() + clean.len() / 8);
    let mut fence: Option<Fence> = None;
    for line in clean.lines() {
        let line = expand_tabs(line);
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        match fence {
            None => match Fence::opening(rest, indent) {
                Some(opened) => {
                    fence = Some(opened);
                    out.push_str("```");
                }
                None => out.push_str(&line),
            },
            Some(open) if open.closes(rest) => {
                fence = None;
                out.push_str("```");
            }
            Some(open) => out.push_str(&line[indent.min(open.indent)..]),
        }
        out.push('\n');
    }
    out
}

#[derive(Debug, Clone, Copy)]
struct Fence {
    marker: char,
    len: usize,
    indent: usize,
}

impl Fence {
    /// A line (after its indent) opening a code block: three or more backticks or tildes.
    fn opening(rest: &str, indent: usize) -> Option<Self> {
        let marker = rest.chars().next().filter(|&c| c == '`' || c == '~')?;
        let len = rest.chars().take_while(|&c| c == marker).count();
        (len >= 3).then_some(Fence { marker, len, indent })
    }

    /// A closing fence: at least as many of the same marker, then nothing but spaces.
    fn closes(self, rest: &str) -> bool {
        let len = rest.chars().take_while(|&c| c == self.marker).count();
        len >= self.len && rest[len..].trim().is_empty()
    }
}

fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len() + TAB_STOP);
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let pad = TAB_STOP - column % TAB_STOP;
            out.extend(std::iter::repeat_n(' ', pad));
            column += pad;
        } else {
            out.push(c);
            column += 1;
        }
    }
    out
}

/// Lays out each table (a run of rows and rules) on its own: framed with a top and bottom border, fitted to
/// `width` (termimad wraps cells, and drops columns when even 3 columns each do not fit), and with a space
/// either side of each cell when the table fits with them.
fn lay_out_tables<'s>(lines: Vec<FmtLine<'s>>, width: usize, skin: &MadSkin) -> Vec<FmtLine<'s>> {
    let mut out = Vec::with_capacity(lines.len() + 4);
    let mut table = Vec::new();
    for line in lines {
        if matches!(line, FmtLine::TableRow(_) | FmtLine::TableRule(_)) {
            table.push(line);
            continue;
        }
        if !table.is_empty() {
            out.extend(lay_out_table(std::mem::take(&mut table), width, skin));
        }
        out.push(line);
    }
    if !table.is_empty() {
        out.extend(lay_out_table(table, width, skin));
    }
    out
}

fn lay_out_table<'s>(mut table: Vec<FmtLine<'s>>, width: usize, skin: &MadSkin) -> Vec<FmtLine<'s>> {
    // termimad's widths before fitting: the widest cell of each column, at least 3.
    let mut widths: Vec<usize> = Vec::new();
    for line in &table {
        let cells: Vec<usize> = match line {
            FmtLine::TableRow(row) => row.cells.iter().map(|cell| cell.visible_length).collect(),
            FmtLine::TableRule(rule) => vec![0; rule.aligns.len()],
            _ => Vec::new(),
        };
        if widths.len() < cells.len() {
            widths.resize(cells.len(), MIN_COLUMN);
        }
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell);
        }
    }
    let columns = widths.len();
    if !matches!(table.last(), Some(FmtLine::TableRule(_))) {
        table.push(border(Vec::new()));
    }
    if !matches!(table.first(), Some(FmtLine::TableRule(_))) {
        table.insert(0, border(vec![Alignment::Center; columns]));
    }
    // Each column is its content, a space either side and a border; then the closing border.
    let padded_width = widths.iter().sum::<usize>() + 3 * columns + 1;
    let padded = padded_width <= width;
    termimad::fix_all_tables(&mut table, if padded { width - 2 * columns } else { width }, skin);
    if padded {
        for line in &mut table {
            match line {
                FmtLine::TableRow(row) => row.cells.iter_mut().for_each(pad_cell),
                FmtLine::TableRule(rule) => rule.widths.iter_mut().for_each(|width| *width += 2),
                _ => {}
            }
        }
    }
    table
}

/// A rule `fix_all_tables` sizes and places as the top or bottom border. A top border also sets the
/// alignment of the header row below it: centered, as termimad does for a table without one.
fn border(aligns: Vec<Alignment>) -> FmtLine<'static> {
    FmtLine::TableRule(FmtTableRule { position: RelativePosition::Other, widths: Vec::new(), aligns })
}

fn pad_cell(cell: &mut FmtComposite<'_>) {
    cell.compounds.insert(0, Compound::raw_str(" "));
    cell.add_compound(Compound::raw_str(" "));
    cell.visible_length += 1; // the leading space, inserted without `add_compound`
    if let Some(spacing) = &mut cell.spacing {
        spacing.width += 2;
    }
}

/// Wraps every line but code and tables to `width`, as `termimad::wrap::hard_wrap_lines` does.
fn wrap_prose<'s>(lines: Vec<FmtLine<'s>>, width: usize, skin: &MadSkin) -> Vec<FmtLine<'s>> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let composite = match line {
            FmtLine::Normal(mut code) if code.kind == CompositeKind::Code => {
                // A blank code line would be an empty styled span: write nothing instead.
                code.compounds.retain(|compound| !compound.src.is_empty());
                out.push(FmtLine::Normal(code));
                continue;
            }
            FmtLine::Normal(composite) => composite,
            other => {
                out.push(other);
                continue;
            }
        };
        let (left, right) = skin.line_style(composite.kind).margins_in(Some(width));
        let room = width.saturating_sub(left + right);
        if composite.visible_length <= room {
            out.push(FmtLine::Normal(composite));
            continue;
        }
        match termimad::wrap::hard_wrap_composite(&composite, room, skin) {
            Ok(parts) => out.extend(parts.into_iter().map(FmtLine::Normal)),
            Err(_) => out.push(FmtLine::Normal(composite)),
        }
    }
    out
}

#[cfg(test)]
mod tests;
