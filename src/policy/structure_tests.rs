//! Issue 21 §5: a line is Safe only when every node of its syntax tree is one the walker
//! understands. One row per case, grouped by where the grammar hides a substitution.

use rstest::rstest;

use super::{PolicyConfig, assess};
use crate::protocol::Risk::{self, High, Medium, Safe};

#[rstest]
// Backticks the grammar keeps as plain text inside `${…}`: defaults, patterns, replacements.
#[case::default_backticks("echo ${x:-`id`}", "parameter expansion")]
#[case::assign_default_backticks("echo ${x:=`id`}", "parameter expansion")]
#[case::alternate_backticks("echo ${x:+`id`}", "parameter expansion")]
#[case::error_backticks("echo ${x:?`id`}", "parameter expansion")]
#[case::replace_pattern_backticks("echo ${x/`id`/y}", "parameter expansion")]
#[case::replace_all_backticks("echo ${x//`id`/y}", "parameter expansion")]
#[case::prefix_backticks("echo ${x#`id`}", "parameter expansion")]
#[case::long_prefix_backticks("echo ${x##*`id`}", "parameter expansion")]
#[case::suffix_backticks("echo ${x%`id`}", "parameter expansion")]
#[case::case_mod_backticks("echo ${x^^`id`}", "parameter expansion")]
#[case::quoted_default_backticks("echo \"${x:-`id`}\"", "parameter expansion")]
#[case::assignment_default_backticks("y=${x:-`id`}", "parameter expansion")]
#[case::default_process_substitution("echo ${x:-<(id)}", "parameter expansion")]
#[case::replacement_process_substitution("cat ${x/a/>(id)}", "parameter expansion")]
// Unquoted here-document bodies.
#[case::heredoc_backticks("cat <<EOF\n`id`\nEOF", "here-document")]
#[case::heredoc_backticks_mid_line("cat <<EOF\nuser: `id -un` here\nEOF", "here-document")]
#[case::heredoc_dash_backticks("cat <<-EOF\n\t`id`\n\tEOF", "here-document")]
#[case::heredoc_dash_dollar("cat <<-EOF\n\t$(id)\n\tEOF", "here-document")]
#[case::heredoc_prompt_transform("cat <<EOF\n${x@P}\nEOF", "transform")]
#[case::heredoc_prompt_transform_in_text("cat <<EOF\nhello ${PS1@P} there\nEOF", "transform")]
// `[[ =~ ]]` patterns.
#[case::regex_backticks("[[ x =~ ^a`id`$ ]]", "test")]
fn hidden_substitutions_are_not_safe(#[case] command: &str, #[case] named: &str) {
    let got = assess(command, &PolicyConfig::default());
    assert_ne!(got.risk, Safe, "{command:?}: {got:#?}");
    assert!(got.reasons.iter().any(|r| r.contains(named)), "{command:?}: no reason names {named:?}: {got:#?}");
}

#[rstest]
// Substitutions in `case` patterns and `for` word lists run: their commands are classified.
#[case::case_pattern_backticks("case a in `rm -rf /`) echo;; esac", High)]
#[case::case_pattern_dollar("case a in $(rm -rf /)) echo;; esac", High)]
#[case::case_subject("case `rm -rf /` in a) echo;; esac", High)]
#[case::for_list_backticks("for i in `rm -rf /`; do echo $i; done", High)]
#[case::for_list_dollar("for i in $(rm -rf /); do echo $i; done", High)]
#[case::for_list_unknown("for i in `frobnicate`; do echo $i; done", Medium)]
#[case::select_list("select i in `rm -rf /`; do echo; done", High)]
#[case::regex_dollar("[[ x =~ $(rm -rf /) ]]", High)]
#[case::heredoc_dollar("cat <<EOF\n$(rm -rf /)\nEOF", High)]
#[case::replacement_dollar("echo ${x/a/$(rm -rf /)}", High)]
#[case::default_dollar("echo ${x:-$(rm -rf /)}", High)]
#[case::default_quoted_backticks("echo ${x:-\"`rm -rf /`\"}", High)]
// Read-only substitutions stay Safe once they are seen.
#[case::for_list_safe("for i in `ls`; do echo $i; done", Safe)]
#[case::case_pattern_safe("case a in `date`) echo;; esac", Safe)]
#[case::default_dollar_safe("echo ${x:-$(date)}", Safe)]
// Literal text stays literal: no false alarms.
#[case::quoted_heredoc_literal("cat <<'EOF'\n`id` ${x@P} $(rm -rf /)\nEOF", Safe)]
#[case::escaped_heredoc_literal("cat <<\\EOF\n`id`\nEOF", Safe)]
#[case::escaped_backtick_in_heredoc("cat <<EOF\nrun \\`id\\` later\nEOF", Safe)]
#[case::dollar_at_end_of_regex("grep \"^foo$\" f", Safe)]
#[case::dollar_at_end_of_test_regex("[[ $x =~ ^a$ ]]", Safe)]
#[case::plain_expansions("echo $HOME ${x:-a} ${#x} ${x%%.*} \"${arr[@]}\"", Safe)]
#[case::heredoc_process_substitution_is_text("cat <<EOF\nsee <(x) and >(y)\nEOF", Safe)]
#[case::heredoc_plain_variable("cat <<EOF\nhome is $HOME and ${USER:-me}\nEOF", Safe)]
#[case::for_glob("for f in *.log; do wc -l \"$f\"; done", Safe)]
fn substitutions_are_walked(#[case] command: &str, #[case] want: Risk) {
    let got = assess(command, &PolicyConfig::default());
    assert_eq!(got.risk, want, "{command:?}: {got:#?}");
}

#[test]
fn the_allowlists_match_the_grammar_in_use() {
    // A grammar upgrade that renames or adds node kinds must be looked at, not silently trusted:
    // this lists what the grammar can produce that the audit does not know.
    let unknown = super::structure::unknown_grammar_kinds();
    assert!(unknown.is_empty(), "node kinds the audit does not know (they fail closed): {unknown:?}");
}
