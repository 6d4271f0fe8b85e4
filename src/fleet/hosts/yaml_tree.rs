//! YAML into a small tree that keeps each node's line, with aliases expanded under a budget (an
//! "alias bomb" is an error, not an out-of-memory). Scalars are typed as PyYAML types them, since
//! that is what Ansible sees.

use serde_json::Value;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Nodes a document may expand to, aliases included.
const MAX_NODES: usize = 1_000_000;

/// Levels of nesting a document may have, aliases included: the tree is dropped recursively, so a
/// deeper one (200,000 `- ` on a line) would overflow the stack. Real inventories nest a handful.
const MAX_DEPTH: usize = 256;

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Map(Vec<(Node, Node)>),
    Seq(Vec<Node>),
    Scalar(Value),
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    pub(crate) line: usize,
    size: usize,
    /// Levels from this node to its deepest leaf (a scalar is 1).
    depth: usize,
}

impl Node {
    /// A scalar as the text a key or name is: strings as they are, numbers and booleans written out.
    pub(crate) fn as_text(&self) -> Option<String> {
        match &self.kind {
            Kind::Scalar(Value::String(text)) => Some(text.clone()),
            Kind::Scalar(Value::Number(number)) => Some(number.to_string()),
            Kind::Scalar(Value::Bool(flag)) => Some(if *flag { "True".into() } else { "False".into() }),
            _ => None,
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self.kind, Kind::Scalar(Value::Null))
    }

    pub(crate) fn describe(&self) -> &'static str {
        match &self.kind {
            Kind::Map(_) => "a mapping",
            Kind::Seq(_) => "a list",
            Kind::Scalar(Value::Null) => "empty",
            Kind::Scalar(_) => "a single value",
        }
    }

    /// The entries of a mapping with `<<` merge keys applied (later own keys win).
    pub(crate) fn entries(&self) -> Vec<(String, &Node)> {
        let Kind::Map(items) = &self.kind else { return Vec::new() };
        let mut out: Vec<(String, &Node)> = Vec::new();
        for (key, value) in items {
            let Some(key) = key.as_text() else { continue };
            if key == "<<" {
                let merged: Vec<&Node> = match &value.kind {
                    Kind::Seq(nodes) => nodes.iter().collect(),
                    _ => vec![value],
                };
                for source in merged {
                    for (k, v) in source.entries() {
                        if !out.iter().any(|(have, _)| *have == k) {
                            out.push((k, v));
                        }
                    }
                }
                continue;
            }
            out.retain(|(have, _)| *have != key);
            out.push((key, value));
        }
        out
    }

    /// A scalar's value (mappings and lists are not connection values).
    pub(crate) fn value(&self) -> Value {
        match &self.kind {
            Kind::Scalar(value) => value.clone(),
            Kind::Map(_) | Kind::Seq(_) => Value::Null,
        }
    }
}

/// Parses the first document of `text`; `Ok(None)` for an empty one. Errors carry a 1-based line.
pub(crate) fn parse(text: &str) -> Result<Option<Node>, (usize, String)> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    // Event by event rather than `Parser::load`, which recurses once per level of block nesting
    // (200,000 `- ` overflow the stack inside it): the builder's depth limit stops the loop first.
    loop {
        let (event, mark) = parser.next_token().map_err(|error| (error.marker().line(), error.info().to_owned()))?;
        let end = matches!(event, Event::DocumentEnd | Event::StreamEnd);
        builder.on_event(event, mark);
        if end || builder.error.is_some() {
            break;
        }
    }
    if let Some((line, message)) = builder.error {
        return Err((line, message));
    }
    Ok(builder.root)
}

enum Frame {
    Map { items: Vec<(Node, Node)>, key: Option<Node>, line: usize, anchor: usize, size: usize, depth: usize },
    Seq { items: Vec<Node>, line: usize, anchor: usize, size: usize, depth: usize },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: std::collections::HashMap<usize, Node>,
    root: Option<Node>,
    nodes: usize,
    error: Option<(usize, String)>,
}

impl Builder {
    fn place(&mut self, node: Node, anchor: usize) {
        // An alias can put a deep node under a deep node: the depth is checked where it lands.
        if self.stack.len() + node.depth > MAX_DEPTH {
            self.error = Some((node.line, format!("nesting deeper than {MAX_DEPTH} levels")));
            return;
        }
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Frame::Map { items, key, size, depth, .. }) => {
                *size += node.size;
                *depth = (*depth).max(node.depth + 1);
                match key.take() {
                    None => *key = Some(node),
                    Some(k) => items.push((k, node)),
                }
            }
            Some(Frame::Seq { items, size, depth, .. }) => {
                *size += node.size;
                *depth = (*depth).max(node.depth + 1);
                items.push(node);
            }
        }
    }
}

impl Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        let line = mark.line();
        match event {
            Event::Scalar(text, style, anchor, _tag) => {
                self.nodes += 1;
                let node = Node { kind: Kind::Scalar(scalar(text, style)), line, size: 1, depth: 1 };
                self.place(node, anchor);
            }
            Event::MappingStart(..) | Event::SequenceStart(..) if self.stack.len() >= MAX_DEPTH => {
                self.error = Some((line, format!("nesting deeper than {MAX_DEPTH} levels")));
            }
            Event::MappingStart(anchor, _) => {
                self.stack.push(Frame::Map { items: Vec::new(), key: None, line, anchor, size: 1, depth: 1 });
            }
            Event::SequenceStart(anchor, _) => {
                self.stack.push(Frame::Seq { items: Vec::new(), line, anchor, size: 1, depth: 1 });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let (node, anchor) = match self.stack.pop() {
                    Some(Frame::Map { items, line, anchor, size, depth, .. }) => {
                        (Node { kind: Kind::Map(items), line, size, depth }, anchor)
                    }
                    Some(Frame::Seq { items, line, anchor, size, depth }) => {
                        (Node { kind: Kind::Seq(items), line, size, depth }, anchor)
                    }
                    None => return,
                };
                self.nodes += 1;
                self.place(node, anchor);
            }
            Event::Alias(id) => {
                let Some(node) = self.anchors.get(&id).cloned() else {
                    self.error = Some((line, "an alias names an unknown anchor".into()));
                    return;
                };
                self.nodes = self.nodes.saturating_add(node.size);
                if self.nodes > MAX_NODES {
                    self.error = Some((line, format!("aliases expand to more than {MAX_NODES} nodes")));
                    return;
                }
                self.place(node, 0);
            }
            _ => {}
        }
        if self.nodes > MAX_NODES && self.error.is_none() {
            self.error = Some((line, format!("more than {MAX_NODES} nodes")));
        }
    }
}

/// A scalar's type as YAML 1.1 (PyYAML) gives it: quoted is always a string.
fn scalar(text: String, style: TScalarStyle) -> Value {
    if style != TScalarStyle::Plain {
        return Value::String(text);
    }
    match text.as_str() {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => return Value::Bool(true),
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => return Value::Bool(false),
        _ => {}
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(&text);
    let decimal = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if decimal && let Ok(number) = text.replace('_', "").parse::<i64>() {
        return Value::from(number);
    }
    Value::String(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        match parse(text) {
            Err((_, message)) => message,
            Ok(_) => panic!("parsed: {}", &text[..text.len().min(80)]),
        }
    }

    #[test]
    fn block_and_flow_nesting_past_the_limit_is_an_error_not_a_stack_overflow() {
        let block = format!("{}x\n", "- ".repeat(200_000));
        assert!(error(&block).contains("deeper than 256"));
        let flow = format!("a: {}{}\n", "[".repeat(300), "]".repeat(300));
        error(&flow);
        let mixed = format!("{}{}x{}\n", "- ".repeat(200), "[".repeat(100), "]".repeat(100));
        assert!(error(&mixed).contains("deeper than 256"));
        let within = format!("{}x\n", "- ".repeat(200));
        assert!(parse(&within).is_ok());
    }

    #[test]
    fn aliases_cannot_stack_nesting_past_the_limit() {
        // Each anchor nests the previous one 100 levels deeper: no single block is deep, the tree is.
        let mut text = String::new();
        for i in 0..5 {
            let inner = if i == 0 { "x".to_owned() } else { format!("*a{}", i - 1) };
            text.push_str(&format!("k{i}: &a{i} {}{inner}{}\n", "[".repeat(100), "]".repeat(100)));
        }
        assert!(error(&text).contains("deeper than 256"));
    }
}
