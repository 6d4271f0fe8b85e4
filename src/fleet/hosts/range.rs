//! Ansible's host ranges (`web[01:20].example.com`, `db-[a:c]`, `node[1:9:2]`) and the optional
//! `:port` of an inventory host name.

/// More hosts than any fleet has: a typo like `[1:99999999]` is an error, not an out-of-memory.
const MAX_EXPANDED: usize = 100_000;

const LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Splits `name:port` (and `[v6]:port`); a bare IPv6 address or a range's `:` is not a port.
pub(crate) fn split_port(pattern: &str) -> Result<(String, Option<u16>), String> {
    if let Some(rest) = pattern.strip_prefix('[')
        && let Some((inside, after)) = rest.split_once(']')
        && inside.contains(':')
        && !inside.contains('[')
    {
        let port = match after.strip_prefix(':') {
            Some(port) => Some(parse_port(port, pattern)?),
            None if after.is_empty() => None,
            None => return Err(format!("`{pattern}` is not a host or [address]:port")),
        };
        return Ok((inside.to_owned(), port));
    }
    let mut depth = 0usize;
    let mut colons = Vec::new();
    for (at, c) in pattern.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => colons.push(at),
            _ => {}
        }
    }
    match colons.as_slice() {
        [at] => Ok((pattern[..*at].to_owned(), Some(parse_port(&pattern[at + 1..], pattern)?))),
        _ => Ok((pattern.to_owned(), None)),
    }
}

fn parse_port(text: &str, pattern: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        Ok(port) if port > 0 => Ok(port),
        _ => Err(format!("`{pattern}`: `{text}` is not a port number (1-65535)")),
    }
}

/// Every name a host pattern stands for, in order.
pub(crate) fn expand(pattern: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    expand_into(pattern, &mut out)?;
    Ok(out)
}

fn expand_into(pattern: &str, out: &mut Vec<String>) -> Result<(), String> {
    let Some((head, range, tail)) = first_range(pattern) else {
        if out.len() >= MAX_EXPANDED {
            return Err(format!("host ranges expand to more than {MAX_EXPANDED} hosts"));
        }
        out.push(pattern.to_owned());
        return Ok(());
    };
    let bounds: Vec<&str> = range.split(':').collect();
    let (begin, end, step) = match bounds.as_slice() {
        [begin, end] => (*begin, *end, "1"),
        [begin, end, step] => (*begin, *end, *step),
        _ => return Err(format!("host range `[{range}]` must be begin:end or begin:end:step")),
    };
    let begin = if begin.is_empty() { "0" } else { begin };
    if end.is_empty() {
        return Err(format!("host range `[{range}]` has no end value"));
    }
    let step: usize = match step.parse() {
        Ok(step) if step > 0 => step,
        _ => return Err(format!("host range `[{range}]`: the step `{step}` must be a positive number")),
    };
    let width = (begin.len() > 1 && begin.starts_with('0')).then_some(begin.len());
    if width.is_some_and(|width| width != end.len()) {
        return Err(format!("host range `[{range}]`: a zero-padded begin and its end must be the same length"));
    }
    let items: Vec<String> = match (LETTERS.find(begin).filter(|_| begin.len() == 1), LETTERS.find(end)) {
        (Some(from), Some(to)) if end.len() == 1 => {
            if from > to {
                return Err(format!("host range `[{range}]`: the begin comes after the end"));
            }
            LETTERS[from..=to].chars().step_by(step).map(String::from).collect()
        }
        _ => {
            let (Ok(from), Ok(to)) = (begin.parse::<u64>(), end.parse::<u64>()) else {
                return Err(format!("host range `[{range}]` is neither numbers nor single letters"));
            };
            // A range as wide as u64 would overflow `+ 1`: checked, so it is refused, never wrapped.
            let count = if from > to { Some(0) } else { ((to - from) / step as u64).checked_add(1) };
            if count.is_none_or(|count| count > MAX_EXPANDED as u64) {
                return Err(format!("host range `[{range}]` is more than {MAX_EXPANDED} hosts"));
            }
            (0..count.unwrap_or(0))
                .map(|i| {
                    let n = from + i * step as u64;
                    match width {
                        Some(width) => format!("{n:0width$}"),
                        None => n.to_string(),
                    }
                })
                .collect()
        }
    };
    for item in items {
        expand_into(&format!("{head}{item}{tail}"), out)?;
    }
    Ok(())
}

/// The text before, inside and after the first `[…:…]`.
fn first_range(pattern: &str) -> Option<(&str, &str, &str)> {
    let open = pattern.find('[')?;
    let close = open + pattern[open..].find(']')?;
    let inside = &pattern[open + 1..close];
    inside.contains(':').then(|| (&pattern[..open], inside, &pattern[close + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_alphabetic_padded_stepped_and_nested_ranges_expand_in_order() {
        assert_eq!(
            expand("web[01:03].example.com").unwrap(),
            ["web01.example.com", "web02.example.com", "web03.example.com"]
        );
        assert_eq!(expand("db-[a:c]").unwrap(), ["db-a", "db-b", "db-c"]);
        assert_eq!(expand("n[1:9:4]").unwrap(), ["n1", "n5", "n9"]);
        assert_eq!(expand("n[:2]").unwrap(), ["n0", "n1", "n2"]);
        assert_eq!(expand("r[1:2]-[x:y]").unwrap(), ["r1-x", "r1-y", "r2-x", "r2-y"]);
        assert_eq!(expand("n[3:1]").unwrap(), Vec::<String>::new());
        assert_eq!(expand("plain[1]").unwrap(), ["plain[1]"]);
    }

    #[test]
    fn bad_ranges_say_why_and_huge_ones_are_refused() {
        for bad in ["n[1:]", "n[1:2:0]", "n[01:100]", "n[c:a]", "n[1:x]", "n[1:2:3:4]", "n[0:99999999999]"] {
            assert!(expand(bad).is_err(), "{bad}");
        }
        assert!(expand("a[1:400]b[1:400]").unwrap_err().contains("more than"));
    }

    #[test]
    fn a_range_as_wide_as_u64_is_refused_by_name_not_overflowed() {
        for wide in ["n[0:18446744073709551615]", "n[0:18446744073709551615:1]", "n[1:18446744073709551615]"] {
            let error = expand(wide).expect_err(wide);
            assert!(error.contains(&wide[1..]), "{error}");
        }
    }

    #[test]
    fn ports_split_from_names_but_not_from_ranges_or_ipv6() {
        assert_eq!(split_port("web:2222").unwrap(), ("web".into(), Some(2222)));
        assert_eq!(split_port("web[1:3]").unwrap(), ("web[1:3]".into(), None));
        assert_eq!(split_port("web[1:3]:22").unwrap(), ("web[1:3]".into(), Some(22)));
        assert_eq!(split_port("fe80::1").unwrap(), ("fe80::1".into(), None));
        assert_eq!(split_port("[fe80::1]:2200").unwrap(), ("fe80::1".into(), Some(2200)));
        assert!(split_port("web:http").is_err());
        assert!(split_port("web:0").is_err());
    }
}
