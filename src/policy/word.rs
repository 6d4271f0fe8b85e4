//! Words as the shell will see them: quotes removed, escapes decoded, expansions marked.
//!
//! Normalizing here is what makes `r''m`, `"rm"`, `\rm` and `$'\x72m'` all the word `rm`.
//! What the shell can only know at run time (`$x`, `$(…)`, globs) is flagged, never guessed.

use tree_sitter::Node;

use super::parse::{Script, Walker};

/// One shell word after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Word {
    /// The literal text; expansions keep their source form (`$x`), `$HOME` becomes `~`.
    pub text: String,
    /// Some part was quoted (so `*` in it is literal, and the word is data).
    pub quoted: bool,
    /// Contains a parameter, arithmetic or command expansion: its value is only known at run time.
    pub dynamic: bool,
    /// Contains an unquoted `*`, `?` or `[`: the shell expands it to many words.
    pub glob: bool,
    /// Variables this word expands.
    pub vars: Vec<String>,
    /// Command and process substitutions inside the word; they run too.
    pub subs: Vec<Script>,
}

impl Word {
    pub fn literal(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }

    /// Static text, or `None` when the shell decides the value at run time.
    pub fn fixed(&self) -> Option<&str> {
        (!self.dynamic).then_some(self.text.as_str())
    }
}

impl Walker<'_> {
    /// Normalizes any word-like node (word, string, raw_string, concatenation, expansion, …).
    pub(super) fn word(&mut self, node: Node) -> Word {
        let mut word = Word::default();
        self.append_word(node, &mut word);
        word
    }

    fn append_word(&mut self, node: Node, word: &mut Word) {
        match node.kind() {
            "word" | "number" | "file_descriptor" | "variable_name" | "test_operator" => {
                unescape_unquoted(self.text(node), word);
            }
            "raw_string" => {
                word.quoted = true;
                let raw = self.text(node);
                word.text.push_str(raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')).unwrap_or(raw));
            }
            "ansi_c_string" => {
                word.quoted = true;
                let raw = self.text(node);
                let inner = raw.strip_prefix("$'").and_then(|r| r.strip_suffix('\'')).unwrap_or(raw);
                decode_ansi_c(inner, &mut word.text);
            }
            "string" | "translated_string" => {
                word.quoted = true;
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    if child.kind() == "string_content" {
                        unescape_double_quoted(self.text(child), &mut word.text);
                    } else {
                        self.append_word(child, word);
                    }
                }
            }
            "concatenation" => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.append_word(child, word);
                }
            }
            "simple_expansion" | "expansion" => {
                word.dynamic = true;
                if let Some(why) = risky_expansion(self.text(node)) {
                    self.construct(why);
                }
                let name = self.first_variable(node);
                if name.as_deref() == Some("HOME") && self.is_plain_expansion(node) {
                    word.text.push('~');
                } else {
                    word.text.push_str(self.text(node));
                }
                word.vars.extend(name);
                self.collect_subs(node, word);
            }
            "command_substitution" | "process_substitution" => {
                word.dynamic = true;
                if nested_backticks(self.text(node)) {
                    self.construct("nested backticks: what runs depends on how the inner quoting unfolds");
                }
                word.text.push_str(self.text(node));
                word.subs.push(self.script_of(node));
            }
            _ => {
                // Arithmetic, brace expressions, arrays, extglobs: keep the source, know it is dynamic.
                word.dynamic = true;
                if node.kind() == "arithmetic_expansion" {
                    self.arithmetic(node);
                }
                word.text.push_str(self.text(node));
                self.collect_subs(node, word);
            }
        }
    }

    fn first_variable(&self, node: Node) -> Option<String> {
        let mut cursor = node.walk();

        node.named_children(&mut cursor).find_map(|child| match child.kind() {
            "variable_name" | "special_variable_name" => Some(self.text(child).to_owned()),
            "subscript" => child.child_by_field_name("name").map(|name| self.text(name).to_owned()),
            _ => None,
        })
    }

    /// `$HOME` or `${HOME}`, not `${HOME:-/x}` or `${HOME#/}`.
    fn is_plain_expansion(&self, node: Node) -> bool {
        let text = self.text(node);
        text == "$HOME" || text == "${HOME}"
    }

    /// Finds substitutions nested anywhere under `node` (inside `${x:-$(id)}`, arithmetic, …).
    pub(super) fn collect_subs(&mut self, node: Node, word: &mut Word) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "command_substitution" | "process_substitution" => {
                    if nested_backticks(self.text(child)) {
                        self.construct("nested backticks: what runs depends on how the inner quoting unfolds");
                    }
                    word.subs.push(self.script_of(child));
                }
                "arithmetic_expansion" => {
                    self.arithmetic(child);
                    self.collect_subs(child, word);
                }
                "simple_expansion" | "expansion" => {
                    if let Some(why) = risky_expansion(self.text(child)) {
                        self.construct(why);
                    }
                    word.vars.extend(self.first_variable(child));
                    self.collect_subs(child, word);
                }
                _ => self.collect_subs(child, word),
            }
        }
    }
}

/// `${x@P}` (prompt expansion runs `$(…)` held in the value), the other `@` transforms, and
/// `${!x}` (the value names another variable, and `a[$(cmd)]` as a name runs the command).
fn risky_expansion(text: &str) -> Option<&'static str> {
    let inner = text.strip_prefix("${")?.strip_suffix('}')?;
    let (head, op) = match inner.rsplit_once('@') {
        Some((head, op)) if op.len() == 1 && op.bytes().all(|b| b.is_ascii_alphabetic()) => (head, Some(op)),
        _ => (inner, None),
    };
    let name_like = |s: &str| {
        let s = s.strip_prefix('!').unwrap_or(s);
        let base = s.split('[').next().unwrap_or(s);
        !base.is_empty() && base.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b"@*#?$!-".contains(&b))
    };
    if op.is_some() && name_like(head) {
        return Some("a `${x@…}` transform (`@P` expands a value like a prompt, which runs the commands in it)");
    }
    let indirect = inner.strip_prefix('!')?;
    // `${!prefix*}`, `${!prefix@}`, `${!arr[@]}` list names or keys; `${!x}` dereferences.
    let lists =
        indirect.ends_with('*') || indirect.ends_with('@') || indirect.ends_with("[@]") || indirect.ends_with("[*]");
    (!lists && !indirect.is_empty()).then_some("an indirect `${!…}` expansion: the variable it names is only known at run time, and a name with a subscript runs code")
}

fn nested_backticks(text: &str) -> bool {
    text.starts_with('`') && text.contains("\\`")
}

/// Unquoted text: `\x` is `x`, a backslash-newline vanishes, and unescaped glob characters count.
fn unescape_unquoted(raw: &str, word: &mut Word) {
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => word.text.push(next),
            },
            '*' | '?' | '[' => {
                word.glob = true;
                word.text.push(c);
            }
            _ => word.text.push(c),
        }
    }
}

/// Inside double quotes only `\$ \` \" \\` and backslash-newline are escapes.
fn unescape_double_quoted(raw: &str, out: &mut String) {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                    continue;
                }
                Some('\n') => {
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
}

/// Decodes the escapes of `$'…'` so `$'\x72\x6d'` is seen as `rm`.
fn decode_ansi_c(raw: &str, out: &mut String) {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(kind) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match kind {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(kind),
            _ => None,
        };
        if let Some(decoded) = simple {
            out.push(decoded);
            continue;
        }
        let (radix, max_digits) = match kind {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 3),
            _ => {
                out.push('\\');
                out.push(kind);
                continue;
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(kind);
        }
        while digits.len() < max_digits {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        match u32::from_str_radix(&digits, radix).ok().and_then(char::from_u32) {
            Some(decoded) => out.push(decoded),
            None => {
                out.push('\\');
                out.push(kind);
                out.push_str(if radix == 8 { &digits[1..] } else { &digits });
            }
        }
    }
}

/// `word` as one shell word that is never code: bare when it needs no quoting, else in single
/// quotes (`'` written as `'\''`). The inverse of what this module parses.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
        && !word.starts_with('=');
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_escapes_decode() {
        let mut out = String::new();
        decode_ansi_c(r"\x72\x6d \101\u00e9\n\q\", &mut out);
        assert_eq!(out, "rm Aé\n\\q\\");
    }

    #[test]
    fn unquoted_escapes_and_globs() {
        let mut word = Word::default();
        unescape_unquoted(r"\rm\ a\*b*", &mut word);
        assert_eq!(word.text, "rm a*b*");
        assert!(word.glob);
    }
}
