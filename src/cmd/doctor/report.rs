//! The doctor's output: one line per step as it finishes (`✓ DNS  …`), the fix under a failure,
//! and a summary. Colour only on a colour terminal.

use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    /// Works, but worth knowing.
    Warn,
    Fail,
    /// Not checked: not applicable, or an earlier step failed.
    Skip,
}

pub struct Report {
    out: Box<dyn Write>,
    color: bool,
    failed: usize,
    warned: usize,
    /// The first step that failed, for the verdict.
    first_failure: Option<String>,
}

impl Report {
    pub fn new(out: impl Write + 'static, color: bool) -> Self {
        Self { out: Box::new(out), color, failed: 0, warned: 0, first_failure: None }
    }

    pub fn line(&mut self, text: &str) -> std::io::Result<()> {
        writeln!(self.out, "{text}")?;
        self.out.flush()
    }

    /// One step: its outcome, name and what was found; `fix` is printed under it.
    pub fn step(&mut self, outcome: Outcome, name: &str, detail: &str, fix: Option<&str>) -> std::io::Result<()> {
        let (mark, code) = match outcome {
            Outcome::Pass => ("✓", "32"),
            Outcome::Warn => ("!", "33"),
            Outcome::Fail => ("✗", "31"),
            Outcome::Skip => ("–", "2"),
        };
        match outcome {
            Outcome::Fail => {
                self.failed += 1;
                self.first_failure.get_or_insert_with(|| name.to_owned());
            }
            Outcome::Warn => self.warned += 1,
            Outcome::Pass | Outcome::Skip => {}
        }
        // Error bodies (an HTML page) come with line breaks: one line per step. What the endpoint or
        // the model wrote passes the screen gate like any model-written text.
        let detail = crate::ui::display::line(detail);
        let mut detail = detail.split_whitespace().collect::<Vec<_>>().join(" ");
        if detail.chars().count() > 400 {
            detail = detail.chars().take(400).chain(['…']).collect();
        }
        let mark = if self.color { format!("\x1b[{code}m{mark}\x1b[0m") } else { mark.to_owned() };
        writeln!(self.out, "{mark} {name:<10} {detail}")?;
        if let Some(fix) = fix {
            writeln!(self.out, "  fix: {}", crate::ui::display::line(fix))?;
        }
        self.out.flush()
    }

    /// The steps an earlier failure made pointless.
    pub fn skip(&mut self, names: &[&str]) -> std::io::Result<()> {
        for name in names {
            self.step(Outcome::Skip, name, "skipped: an earlier step failed", None)?;
        }
        Ok(())
    }

    pub fn first_failure(&self) -> Option<&str> {
        self.first_failure.as_deref()
    }

    pub fn failed(&self) -> usize {
        self.failed
    }

    pub fn summary(&mut self) -> std::io::Result<()> {
        let warned = match self.warned {
            0 => String::new(),
            1 => " (1 warning)".to_owned(),
            n => format!(" ({n} warnings)"),
        };
        match self.failed {
            0 => self.line(&format!("All checks passed{warned}.")),
            1 => self.line(&format!("1 check failed{warned}: the fix is under it.")),
            n => self.line(&format!("{n} checks failed{warned}: each fix is under its check.")),
        }
    }
}
