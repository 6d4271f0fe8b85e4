//! The structural check behind "fail closed": after the walker has read a tree, every node of it
//! is checked against what the walker explicitly understands.
//!
//! - Every named node kind must be on `KNOWN_KINDS`, and every token on `KNOWN_TOKENS`. Both
//!   lists are allowlists of what the grammar produced when the walker was written, so a construct
//!   a newer grammar adds (or one the walker was never taught) is not Safe, by name.
//! - Text the grammar left as one opaque token (a word, a pattern, a here-document line) must not
//!   hold a substitution or expansion it did not separate: tree-sitter-bash keeps `` `cmd` `` in
//!   `${x:-`cmd`}`, `${x#`cmd`}` or an unquoted here-document as plain text, yet bash runs it.
//! - Every command or process substitution in the tree must have been walked, so its commands
//!   were classified; one the walker skipped is not Safe.
//! - `${x@P}` and the other `@` transforms are named from their tokens, wherever they sit.

use std::collections::HashSet;

use tree_sitter::Node;

/// Named node kinds the walker reads (tree-sitter-bash 0.25).
const KNOWN_KINDS: &[&str] = &[
    "ansi_c_string",
    "arithmetic_expansion",
    "array",
    "binary_expression",
    "brace_expression",
    "c_style_for_statement",
    "case_item",
    "case_statement",
    "command",
    "command_name",
    "command_substitution",
    "comment",
    "compound_statement",
    "concatenation",
    "declaration_command",
    "do_group",
    "elif_clause",
    "else_clause",
    "expansion",
    "extglob_pattern",
    "file_descriptor",
    "file_redirect",
    "for_statement",
    "function_definition",
    "heredoc_body",
    "heredoc_content",
    "heredoc_end",
    "heredoc_redirect",
    "heredoc_start",
    "herestring_redirect",
    "if_statement",
    "list",
    "negated_command",
    "number",
    "parenthesized_expression",
    "pipeline",
    "postfix_expression",
    "process_substitution",
    "program",
    "raw_string",
    "redirected_statement",
    "regex",
    "simple_expansion",
    "special_variable_name",
    "string",
    "string_content",
    "subscript",
    "subshell",
    "ternary_expression",
    "test_command",
    "test_operator",
    "translated_string",
    "unary_expression",
    "unset_command",
    "variable_assignment",
    "variable_assignments",
    "variable_name",
    "while_statement",
    "word",
];

/// Tokens (anonymous nodes) of the grammar the walker was written against. The `@` transform
/// letters (`P`, `Q`, `E`, `A`, `K`, `a`, `k`, `u`, `U`, `L`) are deliberately absent.
const KNOWN_TOKENS: &[&str] = &[
    "!", "!=", "\"", "#", "##", "$", "$(", "$((", "$[", "$`", "${", "%", "%%", "%=", "&", "&&", "&=", "&>", "&>>", "(",
    "((", ")", "))", "*", "**", "**=", "*=", "+", "++", "+=", ",", ",,", "-", "--", "-=", "-a", "-o", "..", "/", "/#",
    "/%", "//", "/=", ":", ":+", ":-", ":=", ":?", ";", ";&", ";;", ";;&", "<", "<&", "<&-", "<(", "<<", "<<-", "<<<",
    "<<=", "<=", "=", "==", "=~", ">", ">&", ">&-", ">(", ">=", ">>", ">>=", ">|", "?", "@", "[", "[[", "]", "]]", "^",
    "^=", "^^", "`", "``", "case", "declare", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function",
    "if", "in", "local", "readonly", "select", "then", "typeset", "unset", "unsetenv", "until", "while", "{", "|",
    "|&", "|=", "||", "}", "~",
];

/// The `${x@…}` transform operators: tokens of the grammar, never trusted.
const TRANSFORMS: &[&str] = &["A", "E", "K", "L", "P", "Q", "U", "a", "k", "u"];

/// Named kinds whose own text bash still expands, but which the grammar may leave opaque.
const OPAQUE_TEXT: &[&str] =
    &["word", "regex", "extglob_pattern", "string_content", "heredoc_body", "heredoc_content", "concatenation"];

/// Checks the whole tree under `root`; returns one reason per construct the walker cannot vouch
/// for. `walked` holds the start bytes of the substitutions the walker classified.
pub(super) fn audit(root: Node, src: &str, walked: &HashSet<usize>) -> Vec<String> {
    let mut reasons: Vec<String> = Vec::new();
    let mut push = |why: String| {
        if !reasons.contains(&why) {
            reasons.push(why);
        }
    };
    // Iterative: the input's nesting is bounded, but the walk should not depend on it.
    let mut stack = vec![(root, false)];
    while let Some((node, literal)) = stack.pop() {
        let kind = node.kind();
        if node.is_error() || node.is_missing() {
            // The walker already reports these as unparseable (High).
        } else if node.is_named() {
            if !KNOWN_KINDS.contains(&kind) {
                push(format!("`{kind}`: a shell construct opsai does not model, so it cannot tell what it runs"));
            }
        } else if !KNOWN_TOKENS.contains(&kind) && !is_transform(node) {
            // (A letter after `@` is a transform, named below.)
            push(format!("`{}`: shell syntax opsai does not model, so it cannot tell what it runs", snippet(kind)));
        }
        if matches!(kind, "command_substitution" | "process_substitution") && !walked.contains(&node.start_byte()) {
            push(format!(
                "`{}`: a substitution opsai did not look into, so the commands in it were not checked",
                snippet(text(src, node))
            ));
        }
        if kind == "expansion" && has_transform(node) {
            push("a `${x@…}` transform (`@P` expands a value like a prompt, which runs the commands in it)".into());
        }
        if !literal
            && OPAQUE_TEXT.contains(&kind)
            && let Some(found) = hidden_expansion(src, node)
        {
            push(format!(
                "`{}` inside {}: bash expands it, but the parser kept it as plain text, so opsai cannot see what it runs",
                snippet(&found),
                context(node)
            ));
        }
        // A quoted here-document's body is data: bash expands nothing in it.
        let literal_below = literal || (kind == "heredoc_redirect" && quoted_heredoc(src, node));
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            stack.push((child, literal_below));
        }
    }
    reasons
}

fn text<'s>(src: &'s str, node: Node) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

fn snippet(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(40).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// `<<'EOF'`, `<<"EOF"`, `<<\EOF`: any quoting of the delimiter makes the body literal.
fn quoted_heredoc(src: &str, node: Node) -> bool {
    let mut cursor = node.walk();
    let start = node.children(&mut cursor).find(|c| c.kind() == "heredoc_start");
    start.is_some_and(|s| text(src, s).contains(['\'', '"', '\\']))
}

/// A transform letter right after `@` (named by `has_transform`, not as an unknown token).
fn is_transform(token: Node) -> bool {
    TRANSFORMS.contains(&token.kind()) && token.prev_sibling().is_some_and(|p| p.kind() == "@")
}

/// An `@` token followed by a letter token inside `${…}`.
fn has_transform(node: Node) -> bool {
    let mut cursor = node.walk();
    let tokens: Vec<Node> = node.children(&mut cursor).collect();
    tokens.windows(2).any(|pair| {
        pair[0].kind() == "@" && !pair[1].is_named() && pair[1].kind().bytes().all(|b| b.is_ascii_alphabetic())
    })
}

/// The first unescaped backtick or `$`-expansion in the text of `node` outside its named
/// children (which the walker reads on their own).
fn hidden_expansion(src: &str, node: Node) -> Option<String> {
    let mut own = String::new();
    let mut at = node.start_byte();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        own.push_str(src.get(at..child.start_byte()).unwrap_or(""));
        // A stand-in keeps `a` + `$x` + `b` from reading as one token across the child.
        own.push(' ');
        at = child.end_byte().max(at);
    }
    own.push_str(src.get(at..node.end_byte()).unwrap_or(""));
    let bytes = own.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'`' => return Some(own[i..].to_owned()),
            b'$' if bytes.get(i + 1).is_some_and(|&n| expands(n)) => return Some(own[i..].to_owned()),
            // `${x:-<(cmd)}`: bash runs a process substitution there too (not in a here-document).
            b'<' | b'>' if bytes.get(i + 1) == Some(&b'(') && !node.kind().starts_with("heredoc") => {
                return Some(own[i..].to_owned());
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// What may follow `$` to make an expansion: `$(`, `${`, `$[`, a name, a digit, a special parameter.
fn expands(next: u8) -> bool {
    next.is_ascii_alphanumeric() || b"_({[@*#?$!-".contains(&next)
}

fn context(node: Node) -> &'static str {
    let mut parent = node.parent();
    while let Some(p) = parent {
        match p.kind() {
            "expansion" => return "a parameter expansion's default, pattern or replacement",
            "heredoc_body" | "heredoc_redirect" => return "an unquoted here-document",
            "case_item" => return "a `case` pattern",
            "for_statement" => return "a `for` word list",
            "test_command" => return "a `[[ … ]]` test",
            "command" | "declaration_command" | "variable_assignment" => return "a word",
            _ => parent = p.parent(),
        }
    }
    if node.kind().starts_with("heredoc") { "an unquoted here-document" } else { "a word" }
}

/// Visible node kinds of the loaded grammar that neither allowlist names (supertypes aside,
/// which never appear in a tree). Empty while the lists match the grammar.
#[cfg(test)]
pub(super) fn unknown_grammar_kinds() -> Vec<String> {
    let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
    let mut unknown = Vec::new();
    for id in 0..language.node_kind_count() {
        let Ok(id) = u16::try_from(id) else { break };
        let Some(kind) = language.node_kind_for_id(id) else { continue };
        if !language.node_kind_is_visible(id) || language.node_kind_is_supertype(id) || kind == "ERROR" {
            continue;
        }
        let known = if language.node_kind_is_named(id) { KNOWN_KINDS } else { KNOWN_TOKENS };
        if !known.contains(&kind) && !TRANSFORMS.contains(&kind) && !unknown.iter().any(|k| k == kind) {
            unknown.push(kind.to_owned());
        }
    }
    unknown
}
