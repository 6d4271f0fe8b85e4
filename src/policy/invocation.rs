//! One program invocation as the rules see it: its normalized name and argument words, with the
//! option-reading helpers every rule needs (short clusters, GNU long options and their
//! abbreviations, find-style single-dash words, subcommands).

use super::word::Word;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Invocation<'a> {
    /// Normalized program name: `rm` for `/usr/bin/rm`, `"rm"` or `\rm`.
    pub name: &'a str,
    pub args: &'a [Word],
    /// Run once per input by `xargs` or `find -exec`: "one named file" becomes "every file found".
    pub bulk: bool,
}

impl<'a> Invocation<'a> {
    pub(crate) fn texts(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.args.iter().map(|word| word.text.as_str())
    }

    /// Arguments before a `--` terminator: the ones that can be options.
    fn option_words(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.texts().take_while(|text| *text != "--")
    }

    /// `-x` alone or inside a cluster such as `-rfx`.
    pub(crate) fn has_short(&self, flag: char) -> bool {
        self.option_words().any(|text| {
            text.strip_prefix('-').is_some_and(|rest| {
                !rest.starts_with('-') && rest.chars().take_while(|c| c.is_ascii_alphanumeric()).any(|c| c == flag)
            })
        })
    }

    /// `--name`, `--name=value`, or an unambiguous-looking abbreviation (`--forc`): GNU getopt and
    /// git accept those, so a veto must match them too.
    pub(crate) fn has_long(&self, name: &str) -> bool {
        self.option_words().any(|text| long_matches(text, name))
    }

    /// `--name` or `--name=…` exactly, no abbreviation: for options whose abbreviations are also
    /// the full names of harmless options (`--cursor` is not `--cursor-file`).
    pub(crate) fn has_long_exact(&self, name: &str) -> bool {
        self.option_words().any(|text| text == name || text.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
    }

    /// Any of these exact words (find's `-delete`, `systemctl`'s `--now`), before `--`.
    pub(crate) fn has_word(&self, words: &[&str]) -> bool {
        self.option_words().any(|text| words.contains(&text))
    }

    /// The value of `-o VALUE`, `-oVALUE`, `--output VALUE` or `--output=VALUE`.
    pub(crate) fn value_of(&self, short: Option<char>, long: &str) -> Option<&'a str> {
        let texts: Vec<&'a str> = self.option_words().collect();
        for (i, text) in texts.iter().enumerate() {
            if let Some(rest) = text.strip_prefix("--") {
                let (key, value) = rest.split_once('=').map_or((rest, None), |(k, v)| (k, Some(v)));
                if key.len() >= 2 && long.strip_prefix("--").is_some_and(|l| l.starts_with(key)) {
                    return value.or_else(|| texts.get(i + 1).copied());
                }
            } else if let (Some(flag), Some(rest)) = (short, text.strip_prefix('-'))
                && let Some(pos) = rest.find(flag)
                && rest[..pos].chars().all(|c| c.is_ascii_alphabetic())
            {
                let value = &rest[pos + flag.len_utf8()..];
                return if value.is_empty() { texts.get(i + 1).copied() } else { Some(value) };
            }
        }
        None
    }

    /// Words that are not options (everything after `--` counts).
    pub(crate) fn positionals(&self) -> Vec<&'a Word> {
        let mut out = Vec::new();
        let mut after_dashes = false;
        for word in self.args {
            if !after_dashes && word.text == "--" {
                after_dashes = true;
            } else if after_dashes || !word.text.starts_with('-') || word.text == "-" {
                out.push(word);
            }
        }
        out
    }

    /// The first positional word, skipping options; `with_value` lists options that take the next
    /// word as their value (`git -C dir status`).
    pub fn subcommand(&self, with_value: &[&str]) -> Option<(usize, &'a str)> {
        let mut skip_next = false;
        for (i, word) in self.args.iter().enumerate() {
            if skip_next {
                skip_next = false;
                continue;
            }
            let text = word.text.as_str();
            if text.starts_with('-') {
                skip_next = with_value.contains(&text);
                continue;
            }
            return Some((i, text));
        }
        None
    }

    /// The invocation of the same program starting after argument `index` (for subcommands).
    pub fn after(&self, index: usize) -> Invocation<'a> {
        Invocation { name: self.name, args: self.args.get(index + 1..).unwrap_or(&[]), bulk: self.bulk }
    }

    pub(crate) fn any_dynamic(&self) -> bool {
        self.args.iter().any(|word| word.dynamic)
    }
}

/// Does `text` (an argument) name the long option `name` (given with its dashes)?
pub(crate) fn long_matches(text: &str, name: &str) -> bool {
    let Some(key) = text.strip_prefix("--") else {
        return false;
    };
    let key = key.split_once('=').map_or(key, |(k, _)| k);
    let Some(want) = name.strip_prefix("--") else {
        return text == name;
    };
    key == want || (key.len() >= 3 && want.starts_with(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn reads_options() {
        let args = words("-rf --forc --output=x -o y -- -z");
        let inv = Invocation { name: "t", args: &args, bulk: false };
        assert!(inv.has_short('r') && inv.has_short('f') && !inv.has_short('z'));
        assert!(inv.has_long("--force") && !inv.has_long("--format"));
        assert_eq!(inv.value_of(Some('o'), "--output"), Some("x"));
        // `y` is the value of `-o`, which only the program knows; positionals cannot tell.
        assert_eq!(inv.positionals().iter().map(|w| w.text.as_str()).collect::<Vec<_>>(), ["y", "-z"]);
        let args = words("-C dir log -p");
        let inv = Invocation { name: "git", args: &args, bulk: false };
        assert_eq!(inv.subcommand(&["-C"]), Some((2, "log")));
        assert_eq!(inv.after(2).texts().collect::<Vec<_>>(), ["-p"]);
    }
}
