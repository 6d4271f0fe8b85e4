//! `sed` and `awk`: text filters that are read-only unless their program writes files or runs
//! commands. Their programs are scanned, not guessed at: an unknown construct counts as a write.

use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

pub fn sed<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.has_short('i') || inv.has_long("--in-place") {
        let files = inv.positionals();
        let targets = files.get(usize::from(!has_expression(inv))..).unwrap_or(&[]);
        return super::write_targets(
            targets.iter().copied(),
            "edits in place",
            Verdict::medium("edits files in place"),
        )
        .into();
    }
    if inv.has_short('f') || inv.has_long("--file") {
        return Verdict::medium("runs a sed script from a file").into();
    }
    let scripts = match sed_scripts(inv) {
        Ok(scripts) => scripts,
        Err(option) => return Verdict::medium(format!("option {option} not known to be read-only")).into(),
    };
    for script in scripts {
        match sed_effect(script) {
            SedEffect::None => {}
            SedEffect::Writes => return Verdict::high("the sed script writes files (w/W)").into(),
            SedEffect::Reads => {
                return Verdict::high("the sed script reads a file it names itself (r/R)").into();
            }
            SedEffect::Executes => {
                return Verdict::high("the sed script runs commands (e)").into();
            }
            SedEffect::Unknown => {
                return Verdict::medium("the sed script could not be read").into();
            }
        }
    }
    Verdict::SAFE.into()
}

/// The sed scripts of an invocation: `-e S`, `-eS`, `-ne S`, `--expression=S`, else the first
/// positional. Only full long-option names are known (an abbreviation is an unknown option).
/// `Err` names an option that is not known.
fn sed_scripts<'a>(inv: &Invocation<'a>) -> Result<Vec<&'a str>, &'a str> {
    const FLAGS: &str = "nEruszi";
    const LONG: &[&str] = &[
        "quiet", "silent", "posix", "debug", "sandbox", "null-data", "zero-terminated", "regexp-extended", "separate",
        "unbuffered", "follow-symlinks", "in-place",
    ];
    let mut scripts = Vec::new();
    let mut positional = None;
    let mut i = 0;
    while let Some(word) = inv.args.get(i) {
        let text = word.text.as_str();
        i += 1;
        if text == "--" {
            positional = positional.or(inv.args.get(i).map(|w| w.text.as_str()));
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            if name == "expression" || name == "line-length" {
                let value = match value {
                    Some(value) => value,
                    None => {
                        i += 1;
                        inv.args.get(i - 1).map_or("", |w| w.text.as_str())
                    }
                };
                if name == "expression" {
                    scripts.push(value);
                }
            } else if !LONG.contains(&name) {
                return Err(text);
            }
        } else if let Some(cluster) = text.strip_prefix('-').filter(|c| !c.is_empty()) {
            for (offset, flag) in cluster.char_indices() {
                if flag == 'e' || flag == 'l' {
                    let rest = &cluster[offset + 1..];
                    let value = if rest.is_empty() {
                        i += 1;
                        inv.args.get(i - 1).map_or("", |w| w.text.as_str())
                    } else {
                        rest
                    };
                    if flag == 'e' {
                        scripts.push(value);
                    }
                    break;
                }
                if !FLAGS.contains(flag) {
                    return Err(text);
                }
            }
        } else if positional.is_none() {
            positional = Some(text);
        }
    }
    if scripts.is_empty() {
        scripts.extend(positional);
    }
    Ok(scripts)
}

fn has_expression(inv: &Invocation) -> bool {
    inv.has_short('e') || inv.has_long("--expression")
}

#[derive(Debug, PartialEq, Eq)]
enum SedEffect {
    None,
    Writes,
    Reads,
    Executes,
    Unknown,
}

/// Walks a sed script command by command (addresses, then the command letter and its arguments).
fn sed_effect(script: &str) -> SedEffect {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == ';' || c == '}' || c == '{' || c == '!' {
            i += 1;
            continue;
        }
        // Addresses: line numbers, `$`, `/re/`, `\cREc`, ranges and steps.
        if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+') {
            i += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let delim = if c == '\\' {
                i += 1;
                match chars.get(i) {
                    Some(d) => *d,
                    None => return SedEffect::Unknown,
                }
            } else {
                '/'
            };
            i = match skip_delimited(&chars, i + 1, delim) {
                Some(next) => next,
                None => return SedEffect::Unknown,
            };
            // `/re/I` and `/re/M` modifiers.
            while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                i += 1;
            }
            continue;
        }
        i += 1;
        match c {
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' | 'l' | 'L' | 'q'
            | 'Q' => {
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == ' ') {
                    i += 1;
                }
            }
            'r' | 'R' => return SedEffect::Reads,
            ':' | 'b' | 't' | 'T' | '#' | 'a' | 'i' | 'c' => {
                while i < chars.len() && chars[i] != '\n' && (matches!(c, 'a' | 'i' | 'c' | '#') || chars[i] != ';') {
                    i += 1;
                }
            }
            'w' | 'W' => return SedEffect::Writes,
            'e' => return SedEffect::Executes,
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else {
                    return SedEffect::Unknown;
                };
                if delim == '\n' || delim == '\\' {
                    return SedEffect::Unknown;
                }
                let Some(after_pattern) = skip_delimited(&chars, i + 1, delim) else {
                    return SedEffect::Unknown;
                };
                let Some(after_replacement) = skip_delimited(&chars, after_pattern, delim) else {
                    return SedEffect::Unknown;
                };
                i = after_replacement;
                if c == 's' {
                    while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                        match chars[i] {
                            'w' | 'W' => return SedEffect::Writes,
                            'e' => return SedEffect::Executes,
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | ' ' => {}
                            d if d.is_ascii_digit() => {}
                            _ => return SedEffect::Unknown,
                        }
                        i += 1;
                    }
                }
            }
            _ => return SedEffect::Unknown,
        }
    }
    SedEffect::None
}

/// Index just past the next unescaped `delim` at or after `start`.
fn skip_delimited(chars: &[char], start: usize, delim: char) -> Option<usize> {
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == delim => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

pub(crate) fn awk<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const FLAGS: &str = "bcCgMnNOPrsStV";
    const LONG: &[&str] = &[
        "characters-as-bytes", "traditional", "copyright", "gen-pot", "bignum", "use-lc-numeric", "non-decimal-data",
        "optimize", "posix", "re-interval", "no-optimize", "sandbox", "lint-old", "lint", "version", "help", "csv",
    ];
    // The program is `-e TEXT`/`--source=TEXT`, else the first argument that is not an option.
    let mut programs: Vec<&str> = Vec::new();
    let mut positional = None;
    let mut i = 0;
    while let Some(word) = inv.args.get(i) {
        i += 1;
        let text = word.text.as_str();
        let value = |i: &mut usize, attached: &'a str| -> Option<&'a str> {
            if attached.is_empty() {
                *i += 1;
                inv.args.get(*i - 1).map(|w| w.text.as_str())
            } else {
                Some(attached)
            }
        };
        match text {
            "--" => {
                positional = inv.args.get(i).map(|w| w.text.as_str());
                break;
            }
            "-F" | "-v" | "--field-separator" | "--assign" => i += 1,
            t if t.starts_with("--field-separator=") || t.starts_with("--assign=") => {}
            t if t.starts_with("-F") || t.starts_with("-v") => {}
            t if t.starts_with("-e") || t == "--source" || t.starts_with("--source=") => {
                let attached = t.strip_prefix("-e").or_else(|| t.strip_prefix("--source=")).unwrap_or("");
                programs.extend(value(&mut i, attached));
            }
            t if t.starts_with("-f") || t.starts_with("-E") || t.starts_with("-i") || t.starts_with("-l") => {
                return Verdict::medium(format!("{t}: loads awk code or an extension from a file")).into();
            }
            t if t.starts_with("-o") || t.starts_with("-p") || t.starts_with("-d") => {
                return Verdict::medium(format!("{t}: writes a pretty-print, profile or variable dump file")).into();
            }
            t if t.starts_with("--") => {
                let name = &t[2..];
                let name = name.split_once('=').map_or(name, |(n, _)| n);
                if !LONG.contains(&name) {
                    return Verdict::medium(format!("option {t} not known to be read-only")).into();
                }
            }
            t if t.starts_with('-') && t.len() > 1 => {
                if let Some(flag) = t[1..].chars().find(|c| !FLAGS.contains(*c) && *c != 'L') {
                    return Verdict::medium(format!("option -{flag} not known to be read-only")).into();
                }
            }
            _ => {
                // Options end at the first operand: the program, or a file after `-e`.
                if programs.is_empty() {
                    positional = Some(text);
                }
                break;
            }
        }
    }
    if programs.is_empty() {
        programs.extend(positional);
    }
    programs.into_iter().filter_map(awk_effect).fold(Verdict::SAFE, Verdict::max).into()
}

/// What an awk program does beyond reading, if anything.
fn awk_effect(program: &str) -> Option<Verdict> {
    let raw: String = program.chars().filter(|c| !c.is_whitespace()).collect();
    // Checked on the raw text too: a quote inside a regex (`/"/`) can hide code from the blanking.
    if raw.contains("system(") {
        return Some(Verdict::high("the awk program calls system()"));
    }
    // A quote inside a regex (`/"/`) would hide the rest of the program from the string blanking.
    let quotes = program
        .chars()
        .zip(std::iter::once(' ').chain(program.chars()))
        .filter(|(c, before)| *c == '"' && *before != '\\')
        .count();
    if quotes % 2 == 1 {
        return Some(Verdict::medium("the awk program could not be read (unbalanced quotes)"));
    }
    let code = blank_strings(program);
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains("|getline") || compact.contains("|&") {
        return Some(Verdict::high("the awk program runs a command through a pipe"));
    }
    if compact.contains('@') {
        return Some(Verdict::high("the awk program calls a function by name (@f), which can reach system()"));
    }
    if let Some(effect) = print_redirect(&code, program) {
        return Some(Verdict::high(effect));
    }
    if raw.contains('@') {
        return Some(Verdict::medium("the awk program has an @ that could be an indirect call"));
    }
    // `getline < f`, `getline line < ARGV[1]`: a `<` after `getline` in the same statement.
    let reads_file = raw.match_indices("getline").any(|(at, _)| {
        let after = &raw[at + "getline".len()..];
        after.split([';', '}', '\n']).next().is_some_and(|statement| statement.contains('<'))
    });
    if reads_file {
        return Some(Verdict::medium("the awk program reads a file it names itself (getline <)"));
    }
    if raw.contains("ENVIRON") {
        return Some(Verdict::medium("the awk program reads the environment (ENVIRON), where tokens live"));
    }
    None
}

/// Inside print/printf, `>` and `|` outside parentheses redirect the output. `code` is the program
/// with its strings blanked (same characters, same positions as `program`); a redirect to
/// `"/dev/stderr"`, `"/dev/stdout"` or `"/dev/null"` writes no file.
fn print_redirect(code: &str, program: &str) -> Option<&'static str> {
    let original: Vec<char> = program.chars().collect();
    let to_stream = |at: usize| {
        let rest: String = original.iter().skip(at).skip_while(|c| **c == '>' || c.is_whitespace()).collect();
        ["\"/dev/stderr\"", "\"/dev/stdout\"", "\"/dev/null\""].iter().any(|s| rest.starts_with(s))
    };
    // Inside print/printf, `>` and `|` outside parentheses redirect the output.
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        if starts_word && code[char_offset(code, i)..].starts_with("print") {
            let mut j = i + 5;
            if bytes.get(j) == Some(&'f') {
                j += 1;
            }
            if bytes.get(j).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
                i += 1;
                continue;
            }
            let mut depth = 0i32;
            while j < bytes.len() && !(depth == 0 && matches!(bytes[j], ';' | '}' | '\n')) {
                match bytes[j] {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    '|' if depth == 0 && bytes.get(j + 1) != Some(&'|') && (j == 0 || bytes[j - 1] != '|') => {
                        return Some("the awk program pipes output to a command");
                    }
                    '>' if depth == 0 && !to_stream(j) => return Some("the awk program writes a file"),
                    '>' if depth == 0 => {
                        // Past the whole `> "/dev/stderr"` so its `>` is not seen twice.
                        while bytes.get(j + 1) == Some(&'>') {
                            j += 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            i = j;
        }
        i += 1;
    }
    None
}

fn char_offset(text: &str, index: usize) -> usize {
    text.char_indices().nth(index).map_or(text.len(), |(offset, _)| offset)
}

/// Replaces the contents of double-quoted strings with spaces so `print "a > b"` is not a redirect.
fn blank_strings(program: &str) -> String {
    let mut out = String::with_capacity(program.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in program.chars() {
        if in_string {
            if escaped {
                escaped = false;
                out.push(' ');
            } else if c == '\\' {
                escaped = true;
                out.push(' ');
            } else if c == '"' {
                in_string = false;
                out.push('"');
            } else {
                out.push(' ');
            }
        } else {
            if c == '"' {
                in_string = true;
            }
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts() {
        for (script, want) in [
            ("s/a/b/g", SedEffect::None),
            ("1,10p", SedEffect::None),
            ("/^#/d;s|x|y|2", SedEffect::None),
            ("$!N;P;D", SedEffect::None),
            ("s/a/b/w out.txt", SedEffect::Writes),
            ("1w out", SedEffect::Writes),
            ("s/.*/id/e", SedEffect::Executes),
            ("1e rm -rf /", SedEffect::Executes),
            ("/x/a\\hello", SedEffect::None),
            ("s/a/b", SedEffect::Unknown),
            ("1r /etc/shadow", SedEffect::Reads),
            ("$R ~/.ssh/id_rsa", SedEffect::Reads),
        ] {
            assert_eq!(sed_effect(script), want, "{script}");
        }
    }

    #[test]
    fn awk_programs() {
        use crate::protocol::Risk;
        assert!(awk_effect("{print ENVIRON[\"HOME\"]}").is_some_and(|v| v.risk == Risk::Medium));
        assert_eq!(awk_effect("{print $1}"), None);
        assert_eq!(awk_effect("$3 > 100 {print $1, $3}"), None);
        assert_eq!(awk_effect("{print \"a > b | c\"}"), None);
        assert_eq!(awk_effect("{ if (a || b) print ($1 > 2) }"), None);
        assert_eq!(awk_effect("{print \"bad\" > \"/dev/stderr\"}"), None);
        assert!(awk_effect("{print > \"/dev/stderr\" > \"x\"}").is_some());
        assert!(awk_effect("{system(\"rm -rf /\")}").is_some_and(|v| v.risk == Risk::High));
        assert!(awk_effect("{print $0 > \"/etc/passwd\"}").is_some_and(|v| v.risk == Risk::High));
        assert!(awk_effect("{print | \"sh\"}").is_some_and(|v| v.risk == Risk::High));
        assert!(awk_effect("BEGIN{\"id\" | getline x}").is_some_and(|v| v.risk == Risk::High));
        assert!(awk_effect("BEGIN { system (\"x\") }").is_some_and(|v| v.risk == Risk::High));
    }
}
