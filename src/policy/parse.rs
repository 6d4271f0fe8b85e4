//! Step 2 of the policy: parse a command line with tree-sitter's bash grammar into the simple
//! commands it will run, the pipelines that connect them, and their redirections.
//!
//! Everything that runs is collected, wherever it sits: pipeline stages, `&&`/`||`/`;`/`&` lists,
//! subshells and groups, loop and `if`/`case` bodies, function bodies (a definition counts as if
//! called), substitutions inside words, and here-documents. Anything the grammar rejects, or a
//! construct this walker does not know, is recorded in `errors` so the caller can fail closed.

use std::cell::RefCell;
use std::collections::HashSet;

use tree_sitter::{Node, Parser};

use super::word::Word;

/// Reserved words that cannot start a command; the grammar accepts some of them as names.
const RESERVED: &[&str] = &["fi", "then", "else", "elif", "done", "do", "esac", "in", "}", "]]"];

/// Nesting deeper than this is refused rather than walked (a stack-overflow guard).
const MAX_DEPTH: usize = 32;
/// Bracket nesting deeper than this is refused before the grammar sees it: both the C parser and
/// the walker recurse per level, and assess also runs on small-stack worker threads.
const MAX_NESTING: usize = 64;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Script {
    pub commands: Vec<SimpleCommand>,
    /// Each pipeline's stages, each stage the indices of the commands inside it.
    pub pipelines: Vec<Vec<Vec<usize>>>,
    /// Functions defined here, with the indices of the commands in their bodies.
    pub functions: Vec<(String, Vec<usize>)>,
    /// Redirections of compound statements (`{ …; } > f`, `while …; done < f`).
    pub redirects: Vec<Redirect>,
    /// Why (part of) the input could not be understood.
    pub errors: Vec<String>,
    /// Constructs that are never Safe whatever runs them (`${x@P}`, subscripts bash evaluates,
    /// nested backticks), each with its reason.
    pub constructs: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    pub words: Vec<Word>,
    pub assignments: Vec<Assignment>,
    pub redirects: Vec<Redirect>,
    /// The source text, for reasons.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assignment {
    pub name: String,
    pub value: Word,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `>&`, `<&`, `<<`, `<<-`, `<<<`.
    pub op: String,
    pub fd: Option<String>,
    /// The file (or fd number) for file redirections; the text for here-strings.
    pub target: Option<Word>,
    /// The body of a here-document.
    pub heredoc: Option<Word>,
}

impl Redirect {
    pub(crate) fn is_input(&self) -> bool {
        self.op.starts_with('<') && !self.op.starts_with("<&")
    }
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `source`. Never fails: problems land in `Script::errors`.
pub fn parse(source: &str) -> Script {
    if nesting_depth(source) > MAX_NESTING {
        return failed("nested too deeply to assess");
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            if parser.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
                return failed("the bash grammar could not be loaded");
            }
            *slot = Some(parser);
        }
        let Some(parser) = slot.as_mut() else {
            return failed("no parser");
        };
        // The grammar sees only ASCII (see `ascii_mask`); the walker reads the original text by the
        // same byte ranges.
        let masked = ascii_mask(source);
        let Some(tree) = parser.parse(masked.as_bytes(), None) else {
            return failed("the parser gave up");
        };
        let walked = RefCell::new(HashSet::new());
        let mut walker = Walker { src: source, depth: 0, script: Script::default(), walked: &walked };
        walker.statements(tree.root_node());
        for why in super::structure::audit(tree.root_node(), source, &walked.borrow()) {
            walker.construct(&why);
        }
        if tree.root_node().has_error() && walker.script.errors.is_empty() {
            walker.error("the command is incomplete (an unclosed quote, bracket or substitution)".into());
        }
        walker.script
    })
}

/// `source` with every non-ASCII character replaced by as many `a`s as it has bytes. Some
/// supplementary-plane code points (U+F0000, U+10FFFF, U+E0100…) crash tree-sitter-bash's C
/// scanner, which takes the process down; no bash metacharacter is outside ASCII, so a letter is
/// the same kind of word character and every byte offset stays where it was.
fn ascii_mask(source: &str) -> std::borrow::Cow<'_, str> {
    if source.is_ascii() {
        return std::borrow::Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len());
    for c in source.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('a', c.len_utf8()));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The deepest bracket nesting in the raw text (`(`, `{`, `[`, backticks count as opening), an
/// over-estimate that ignores quoting: it only has to bound the work, never to be exact.
fn nesting_depth(source: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for byte in source.bytes() {
        match byte {
            b'(' | b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn has_descendant(node: Node, kind: &str) -> bool {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    children.into_iter().any(|child| child.kind() == kind || has_descendant(child, kind))
}

/// `[[ a[i] -eq 1 ]]`, `[[ -v 'a[$(id)]' ]]`: operands of arithmetic comparisons and `-v` are
/// evaluated, subscripts included. Pattern matches (`== *.[ch]`, `=~ a[0-9]`) are not.
fn test_evaluates_subscript(text: &str) -> bool {
    let evaluates =
        text.split_whitespace().any(|w| matches!(w, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-v" | "-R"));
    evaluates && has_subscript(text)
}

/// A name directly followed by `[`: `a[`, `x_1[`.
pub(super) fn has_subscript(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.windows(2).any(|w| (w[0].is_ascii_alphanumeric() || w[0] == b'_') && w[1] == b'[')
}

/// The names of the variables expanded anywhere under `node`.
fn variables_in(node: Node, src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "variable_name"
            && n.parent().is_some_and(|p| matches!(p.kind(), "simple_expansion" | "expansion"))
        {
            out.push(src.get(n.byte_range()).unwrap_or("").to_owned());
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    out
}

fn failed(why: &str) -> Script {
    Script { errors: vec![why.to_owned()], ..Script::default() }
}

/// Walks one tree, filling one `Script`. Substitutions get a fresh walker on the same source.
pub(super) struct Walker<'a> {
    src: &'a str,
    depth: usize,
    script: Script,
    /// Start bytes of the substitutions walked so far, for the structural audit.
    walked: &'a RefCell<HashSet<usize>>,
}

impl<'a> Walker<'a> {
    pub(super) fn text(&self, node: Node) -> &'a str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    /// The commands inside a `$(…)`, backticks or `<(…)`, as a script of their own.
    pub(super) fn script_of(&mut self, node: Node) -> Script {
        self.walked.borrow_mut().insert(node.start_byte());
        let mut inner = Walker { src: self.src, depth: self.depth + 1, script: Script::default(), walked: self.walked };
        inner.statements(node);
        inner.script
    }

    fn error(&mut self, why: String) {
        self.script.errors.push(why);
    }

    pub(super) fn construct(&mut self, why: &str) {
        if !self.script.constructs.iter().any(|c| c == why) {
            self.script.constructs.push(why.to_owned());
        }
    }

    /// `((…))`, `$((…))`, a C-style `for`: a subscript inside is evaluated, and `a[$(cmd)]` or a
    /// variable holding such text runs code when it is.
    pub(super) fn arithmetic(&mut self, node: Node) {
        if has_descendant(node, "subscript") || self.text(node).contains("[") {
            self.construct("an array subscript in arithmetic: bash evaluates it, and a subscript can run code");
        }
    }

    /// Walks every named child of `node` as a statement.
    fn statements(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            self.statement(child);
        }
    }

    fn statement(&mut self, node: Node) {
        if self.depth >= MAX_DEPTH {
            self.error("nested too deeply to assess".into());
            return;
        }
        if node.is_missing() {
            self.error(format!("incomplete command: missing `{}`", node.kind()));
            return;
        }
        self.depth += 1;
        match node.kind() {
            "comment" | "heredoc_start" | "heredoc_end" => {}
            "ERROR" => {
                let snippet: String = self.text(node).chars().take(40).collect();
                self.error(format!("cannot parse `{snippet}`"));
                self.statements(node);
            }
            "command" => self.command(node),
            "declaration_command" | "unset_command" => self.declaration(node),
            "variable_assignment" | "variable_assignments" => self.assignments_only(node),
            "test_command" => {
                if test_evaluates_subscript(self.text(node)) {
                    self.construct(
                        "an array subscript in a test: bash evaluates it as arithmetic, and a subscript can run code",
                    );
                }
                let mut cmd = SimpleCommand { source: self.text(node).to_owned(), ..SimpleCommand::default() };
                let mut test = Word::literal("[[");
                self.collect_subs(node, &mut test);
                cmd.words.push(test);
                self.script.commands.push(cmd);
            }
            "pipeline" => self.pipeline(node),
            "redirected_statement" => self.redirected(node),
            "function_definition" => {
                let name = node.child_by_field_name("name").map(|n| self.text(n).to_owned()).unwrap_or_default();
                let start = self.script.commands.len();
                if let Some(body) = node.child_by_field_name("body") {
                    self.statement(body);
                }
                let body: Vec<usize> = (start..self.script.commands.len()).collect();
                self.script.functions.push((name, body));
            }
            "compound_statement" if self.text(node).starts_with("((") => {
                self.arithmetic(node);
                let mut holder = Word::default();
                self.collect_subs(node, &mut holder);
                self.adopt_subs(holder);
            }
            "for_statement" => {
                self.loop_variable(node);
                self.compound(node);
            }
            "c_style_for_statement" => {
                self.arithmetic(node);
                self.compound(node);
            }
            "list" | "program" | "compound_statement" | "subshell" | "do_group" | "negated_command"
            | "if_statement" | "elif_clause" | "else_clause" | "while_statement" | "case_statement" | "case_item" => {
                self.compound(node)
            }
            "word"
            | "concatenation"
            | "string"
            | "raw_string"
            | "number"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "binary_expression"
            | "unary_expression"
            | "postfix_expression"
            | "parenthesized_expression"
            | "variable_name"
            | "ansi_c_string"
            | "translated_string"
            | "array"
            | "extglob_pattern"
            | "regex" => {
                // Values of `for`/`case`/conditions: data, but their substitutions still run, the
                // node itself included (`for i in `cmd``).
                let holder = self.word(node);
                self.adopt_subs(holder);
            }
            other => {
                self.error(format!("unsupported shell construct `{other}`"));
                self.statements(node);
            }
        }
        self.depth -= 1;
    }

    /// `for NAME in WORDS`: an assignment of each word to NAME, recorded so the variables the
    /// words expand follow NAME (`for t in $TOKEN; do echo $t; done`). The words' substitutions
    /// are walked with the loop's other children.
    fn loop_variable(&mut self, node: Node) {
        let Some(name) = node.child_by_field_name("variable").map(|n| self.text(n).to_owned()) else { return };
        let mut value = Word { dynamic: true, ..Word::default() };
        let mut cursor = node.walk();
        let words: Vec<Node> = node.children_by_field_name("value", &mut cursor).collect();
        for word in words {
            value.text.push_str(self.text(word));
            value.vars.extend(variables_in(word, self.src));
        }
        let source = format!("for {name} in {}", value.text);
        self.script.commands.push(SimpleCommand {
            assignments: vec![Assignment { name, value }],
            source,
            ..SimpleCommand::default()
        });
    }

    fn compound(&mut self, node: Node) {
        self.statements(node);
    }

    /// Commands from substitutions in a non-command position still run: lift them into this script.
    fn adopt_subs(&mut self, holder: Word) {
        for sub in holder.subs {
            self.adopt(sub);
        }
    }

    fn adopt(&mut self, sub: Script) {
        let offset = self.script.commands.len();
        self.script.commands.extend(sub.commands);
        self.script.pipelines.extend(
            sub.pipelines
                .into_iter()
                .map(|p| p.into_iter().map(|stage| stage.into_iter().map(|i| i + offset).collect()).collect()),
        );
        self.script.functions.extend(
            sub.functions.into_iter().map(|(name, body)| (name, body.into_iter().map(|i| i + offset).collect())),
        );
        self.script.redirects.extend(sub.redirects);
        self.script.errors.extend(sub.errors);
        for why in sub.constructs {
            self.construct(&why);
        }
    }

    fn command(&mut self, node: Node) {
        let mut cmd = SimpleCommand { source: self.text(node).to_owned(), ..SimpleCommand::default() };
        let mut cursor = node.walk();
        let children: Vec<(Option<&str>, Node)> = node
            .children(&mut cursor)
            .enumerate()
            .map(|(i, child)| (u32::try_from(i).ok().and_then(|i| node.field_name_for_child(i)), child))
            .filter(|(_, child)| child.is_named())
            .collect();
        for (field, child) in children {
            match (field, child.kind()) {
                (_, "variable_assignment") => {
                    if let Some(assignment) = self.assignment(child) {
                        cmd.assignments.push(assignment);
                    }
                }
                (_, "file_redirect" | "herestring_redirect" | "heredoc_redirect") => {
                    self.redirect(child, &mut cmd.redirects);
                }
                (Some("name"), _) => {
                    let word = self.word(child.named_child(0).unwrap_or(child));
                    if word.text.is_empty() && !word.quoted {
                        self.error("incomplete command: a command name is missing".into());
                    }
                    if !word.quoted && RESERVED.contains(&word.text.as_str()) {
                        self.error(format!("unexpected `{}`", word.text));
                    }
                    cmd.words.push(word);
                }
                (_, "comment") => {}
                _ => {
                    let word = self.word(child);
                    cmd.words.push(word);
                }
            }
        }
        self.script.commands.push(cmd);
    }

    fn declaration(&mut self, node: Node) {
        let mut cmd = SimpleCommand { source: self.text(node).to_owned(), ..SimpleCommand::default() };
        let keyword = self.text(node).split_whitespace().next().unwrap_or("export").to_owned();
        cmd.words.push(Word::literal(keyword));
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if child.kind() == "variable_assignment" {
                if let Some(assignment) = self.assignment(child) {
                    cmd.words.push(Word::literal(format!("{}={}", assignment.name, assignment.value.text)));
                    cmd.assignments.push(assignment);
                }
            } else {
                let word = self.word(child);
                cmd.words.push(word);
            }
        }
        self.script.commands.push(cmd);
    }

    fn assignments_only(&mut self, node: Node) {
        let mut cmd = SimpleCommand { source: self.text(node).to_owned(), ..SimpleCommand::default() };
        if node.kind() == "variable_assignment" {
            cmd.assignments.extend(self.assignment(node));
        } else {
            let mut cursor = node.walk();
            let children: Vec<Node> = node.named_children(&mut cursor).collect();
            for child in children {
                cmd.assignments.extend(self.assignment(child));
            }
        }
        self.script.commands.push(cmd);
    }

    fn assignment(&mut self, node: Node) -> Option<Assignment> {
        let name = node.child_by_field_name("name").map(|n| self.text(n).to_owned())?;
        let value = node.child_by_field_name("value").map(|v| self.word(v)).unwrap_or_default();
        Some(Assignment { name, value })
    }

    fn pipeline(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        let mut stages = Vec::new();
        for child in children {
            let start = self.script.commands.len();
            self.statement(child);
            stages.push((start..self.script.commands.len()).collect());
        }
        self.script.pipelines.push(stages);
    }

    fn redirected(&mut self, node: Node) {
        let start = self.script.commands.len();
        let body = node.child_by_field_name("body");
        if let Some(body) = body {
            self.statement(body);
        }
        let mut redirects = Vec::new();
        let mut continuation = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children_by_field_name("redirect", &mut cursor).collect();
        for child in children {
            continuation.extend(self.redirect(child, &mut redirects));
        }
        // A plain command keeps its own redirections; a compound statement's go to the script.
        let body_is_command = body.is_some_and(|b| b.kind() == "command") && self.script.commands.len() == start + 1;
        match self.script.commands.get_mut(start) {
            Some(cmd) if body_is_command => cmd.redirects.extend(redirects),
            _ => self.script.redirects.extend(redirects),
        }
        // `cat <<EOF | sh`: the grammar hangs the rest of the pipeline off the here-document.
        for next in continuation {
            let first: Vec<usize> = (start..start + 1).filter(|i| *i < self.script.commands.len()).collect();
            if next.kind() == "pipeline" {
                let mut stages = vec![first];
                let mut cursor = next.walk();
                let parts: Vec<Node> = next.named_children(&mut cursor).collect();
                for part in parts {
                    let from = self.script.commands.len();
                    self.statement(part);
                    stages.push((from..self.script.commands.len()).collect());
                }
                self.script.pipelines.push(stages);
            } else {
                self.statement(next);
            }
        }
    }

    /// Adds the redirection(s) of `node` to `out`; returns statements the grammar nested inside it.
    fn redirect<'t>(&mut self, node: Node<'t>, out: &mut Vec<Redirect>) -> Vec<Node<'t>> {
        let mut continuation = Vec::new();
        let fd = node.child_by_field_name("descriptor").map(|d| self.text(d).to_owned());
        let mut op = String::new();
        let mut targets = Vec::new();
        let mut heredoc = None;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children {
            if !child.is_named() {
                if op.is_empty() && !matches!(child.kind(), "&&" | "||" | ";" | "|" | "&") {
                    op = child.kind().to_owned();
                }
                continue;
            }
            match child.kind() {
                "file_descriptor" | "heredoc_start" | "heredoc_end" => {}
                "heredoc_body" => {
                    let mut body = Word { text: self.text(child).to_owned(), quoted: true, ..Word::default() };
                    self.collect_subs(child, &mut body);
                    body.dynamic = !body.subs.is_empty();
                    heredoc = Some(body);
                }
                "ERROR" => self.error(format!("cannot parse redirection `{}`", self.text(node))),
                // `cat <<EOF > out`: the grammar nests the other redirections inside the here-document.
                "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {
                    continuation.extend(self.redirect(child, out));
                }
                "pipeline" | "command" | "list" | "redirected_statement" | "subshell" | "compound_statement" => {
                    continuation.push(child);
                }
                _ => targets.push(self.word(child)),
            }
        }
        if node.kind() == "heredoc_redirect" || targets.is_empty() {
            out.push(Redirect { op, fd, target: targets.pop(), heredoc });
        } else {
            for target in targets {
                out.push(Redirect { op: op.clone(), fd: fd.clone(), target: Some(target), heredoc: None });
            }
        }
        continuation
    }
}
