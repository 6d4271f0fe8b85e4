//! YAML into a small tree that keeps each node's line, with aliases expanded under a budget (an
//! "alias bomb" is an error, not an out-of-memory). Scalars are typed as PyYAML types them, since
//! that is what Ansible sees.

use serde_json::Value;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Nodes a document may expand to, aliases included.
const MAX_NODES: usize = 1_000_000;

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
    if let Err(error) = parser.load(&mut builder, false) {
        return Err((error.marker().line(), error.info().to_owned()));
    }
    if let Some((line, message)) = builder.error {
        return Err((line, message));
    }
    Ok(builder.root)
}

enum Frame {
    Map { items: Vec<(Node, Node)>, key: Option<Node>, line: usize, anchor: usize, size: usize },
    Seq { items: Vec<Node>, line: usize, anchor: usize, size: usize },
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
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Frame::Map { items, key, size, .. }) => {
                *size += node.size;
                match key.take() {
                    None => *key = Some(node),
                    Some(k) => items.push((k, node)),
                }
            }
            Some(Frame::Seq { items, size, .. }) => {
                *size += node.size;
                items.push(node);
            }
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        let line = mark.line();
        match event {
            Event::Scalar(text, style, anchor, _tag) => {
                self.nodes += 1;
                let node = Node { kind: Kind::Scalar(scalar(text, style)), line, size: 1 };
                self.place(node, anchor);
            }
            Event::MappingStart(anchor, _) => {
                self.stack.push(Frame::Map { items: Vec::new(), key: None, line, anchor, size: 1 });
            }
            Event::SequenceStart(anchor, _) => {
                self.stack.push(Frame::Seq { items: Vec::new(), line, anchor, size: 1 });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let (node, anchor) = match self.stack.pop() {
                    Some(Frame::Map { items, line, anchor, size, .. }) => {
                        (Node { kind: Kind::Map(items), line, size }, anchor)
                    }
                    Some(Frame::Seq { items, line, anchor, size }) => {
                        (Node { kind: Kind::Seq(items), line, size }, anchor)
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
