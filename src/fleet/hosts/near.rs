//! "Did you mean": the known names closest to a term that matched nothing.

/// Up to five names from `known` near `term` (by edit distance, or containing it), closest first.
pub(crate) fn near<'a>(term: &str, known: impl Iterator<Item = &'a str>) -> Vec<String> {
    let wanted: String =
        term.trim_start_matches(['&', '!', '@', '~']).chars().filter(|c| !"*?[]".contains(*c)).collect();
    let wanted = wanted.to_lowercase();
    if wanted.is_empty() {
        return Vec::new();
    }
    let budget = (wanted.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &str)> = known
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let distance = strsim::levenshtein(&wanted, &lower);
            let close = distance <= budget || (wanted.len() >= 3 && lower.contains(&wanted));
            close.then_some((distance, name))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, name)| name.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_come_first_and_far_ones_not_at_all() {
        let known = ["web-01", "web-02", "db-01", "prod", "production-eu", "zzz"];
        assert_eq!(near("prd", known.into_iter()), ["prod"]);
        assert_eq!(near("!web-1", known.into_iter()), ["web-01"]);
        assert_eq!(near("web-0", known.into_iter()), ["web-01", "web-02"]);
        assert_eq!(near("@produc", known.into_iter()), ["prod", "production-eu"]);
        assert!(near("qqqqqqq", known.into_iter()).is_empty());
        assert!(near("*", known.into_iter()).is_empty());
    }
}
