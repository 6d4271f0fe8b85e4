//! Issue 13 §2 (the constructs that are never Safe whatever program runs them), §4 (no input
//! crashes the policy) and the false alarms of §2: one row per case, grouped by class.

use rstest::rstest;

use super::{PolicyConfig, assess};
use crate::protocol::Risk::{self, High, Medium, Safe};

#[rstest]
// Function definitions anywhere, and calls to them.
#[case::function_def("f() { ls; }", Medium)]
#[case::function_def_and_call("f() { ls; }; f", Medium)]
#[case::function_keyword("function f { ls; }", Medium)]
#[case::function_shadows_program("ls() { id; }; ls -la", Medium)]
#[case::function_in_subshell("(g() { :; }; g)", Medium)]
#[case::function_in_substitution("echo $(h() { id; }; h)", Medium)]
#[case::function_destructive_body("ls() { rm -rf ~; }; ls", High)]
// Prompt and transform expansions, indirect expansion.
#[case::prompt_transform("echo ${x@P}", Medium)]
#[case::prompt_transform_quoted("echo \"${PS1@P}\"", Medium)]
#[case::escape_transform("echo ${x@E}", Medium)]
#[case::assignment_transform("echo ${x@A}", Medium)]
#[case::quote_transform("printf %s ${x@Q}", Medium)]
#[case::transform_of_array("echo ${a[0]@P}", Medium)]
#[case::transform_in_default("echo ${y:-${x@P}}", Medium)]
#[case::transform_in_assignment("y=${x@P}", Medium)]
#[case::transform_in_heredoc_free_string("cat <<< \"${x@P}\"", Medium)]
#[case::indirect("echo ${!x}", Medium)]
#[case::indirect_quoted("echo \"${!name}\"", Medium)]
#[case::names_by_prefix_listing_is_fine("echo ${!BASH*}", Safe)]
#[case::array_keys_listing_is_fine("echo ${!arr[@]}", Safe)]
#[case::length_is_fine("echo ${#x}", Safe)]
#[case::default_with_at_sign_is_fine("echo ${x:-a@b}", Safe)]
#[case::all_elements_is_fine("echo \"${arr[@]}\"", Safe)]
// Array subscripts where bash evaluates them.
#[case::subscript_in_arithmetic_expansion("echo $((x[1]))", Medium)]
#[case::subscript_substitution_in_arithmetic("echo $(( a[$(id)] ))", Medium)]
#[case::subscript_in_arithmetic_command("(( x[1] = 2 ))", Medium)]
#[case::subscript_in_test_arith("[[ a[$(id)] -eq 1 ]]", Medium)]
#[case::subscript_in_test_v("[[ -v a[1] ]]", Medium)]
#[case::subscript_in_test_builtin("test -v 'a[$(id)]'", Medium)]
#[case::subscript_in_c_for("for ((i=0; i<a[1]; i++)); do :; done", High)]
#[case::plain_arithmetic_is_fine("echo $((1 + 2))", Safe)]
#[case::c_for_is_fine("for ((i=0;i<3;i++)); do echo $i; done", Safe)]
#[case::glob_class_in_test_is_fine("[[ $f == *.[ch] ]]", Safe)]
#[case::regex_class_in_test_is_fine("[[ $x =~ ^a[0-9]+$ ]]", Safe)]
// Nested backticks.
#[case::nested_backticks("echo `echo \\`id\\``", Medium)]
#[case::nested_backticks_in_string("echo \"`echo \\`id\\``\"", Medium)]
#[case::single_backticks_are_fine("echo `date`", Safe)]
// Redirect targets that are descriptors or sockets.
#[case::dev_fd_out("echo hi > /dev/fd/3", Medium)]
#[case::dev_fd_in("cat < /dev/fd/4", Medium)]
#[case::proc_fd_other_process("echo hi 2>/proc/1/fd/1", Medium)]
#[case::proc_self_fd_high("cat < /proc/self/fd/7", Medium)]
#[case::dup_inherited_fd("echo x >&3", Medium)]
#[case::dup_inherited_fd_in("cat <&5", Medium)]
#[case::dev_tcp("cat < /dev/tcp/1.2.3.4/80", High)]
#[case::dev_udp("echo hi >/dev/udp/1.1.1.1/53", High)]
#[case::dev_tcp_rw_exec("exec 3<>/dev/tcp/example.com/80", High)]
#[case::standard_fds_are_fine("ls 2>&1 >&2 2>/dev/null", Safe)]
#[case::dev_fd_standard_is_fine("echo hi > /dev/fd/2", Safe)]
#[case::proc_self_stdin_is_fine("cat < /proc/self/fd/0", Safe)]
// exec with redirections.
#[case::exec_redirect_out("exec >/tmp/x", Medium)]
#[case::exec_dup("exec 2>&1", Medium)]
#[case::exec_in("exec < /dev/null", Medium)]
// Environment given to a command: a short allowlist.
#[case::prefix_unknown("FOO=bar ls", Medium)]
#[case::prefix_wgetrc("WGETRC=/dev/stdin wget -q -O- example.com", Medium)]
#[case::prefix_ld_preload("LD_PRELOAD=/tmp/x.so ls", Medium)]
#[case::prefix_pager_program("PAGER=id git log", Medium)]
#[case::prefix_curl_home("CURL_HOME=/tmp curl -s example.com", Medium)]
#[case::prefix_kubeconfig("KUBECONFIG=/tmp/k kubectl get pods", Medium)]
#[case::prefix_lc_all("LC_ALL=C ls", Safe)]
#[case::prefix_lang("LANG=C sort notes.txt", Safe)]
#[case::prefix_tz("TZ=UTC date", Safe)]
#[case::prefix_columns("COLUMNS=200 ps aux", Safe)]
#[case::prefix_no_color("NO_COLOR=1 ls", Safe)]
#[case::prefix_pager_cat("PAGER=cat git log", Safe)]
#[case::prefix_with_substitution("LANG=$(id) ls", Medium)]
// Config taken from stdin, a descriptor or a process substitution.
#[case::kubeconfig_stdin_attached("kubectl --kubeconfig=/dev/stdin get pods", High)]
#[case::kubeconfig_stdin_separate("kubectl get pods --kubeconfig /dev/stdin", High)]
#[case::kubeconfig_process_substitution("kubectl --kubeconfig <(echo x) get pods", Medium)]
#[case::config_fd("helm list --kubeconfig /dev/fd/3", Medium)]
#[case::config_proc_self("jq --from-file=/proc/self/fd/0 .", Medium)]
#[case::diff_of_process_substitutions_is_fine("diff <(ls a) <(ls b)", Safe)]
#[case::cat_stdin_is_fine("cat /dev/stdin", Safe)]
// Cloud metadata in any spelling.
#[case::metadata_dotted("curl http://169.254.169.254/latest/meta-data/", High)]
#[case::metadata_decimal("curl http://2852039166/", High)]
#[case::metadata_hex("curl http://0xa9fea9fe/", High)]
#[case::metadata_hex_dotted("curl http://0xA9.0xFE.0xA9.0xFE/", High)]
#[case::metadata_octal("curl http://0251.0376.0251.0376/", High)]
#[case::metadata_two_part("curl http://169.16689662/", High)]
#[case::metadata_mapped_v6("curl http://[::ffff:169.254.169.254]/", High)]
#[case::metadata_mapped_v6_hex("curl -g 'http://[::ffff:a9fe:a9fe]/'", High)]
#[case::metadata_aws_v6("curl http://[fd00:ec2::254]/latest", High)]
#[case::metadata_ecs("curl -s http://169.254.170.2/v2/credentials", High)]
#[case::metadata_alibaba("curl http://100.100.100.200/latest/meta-data", High)]
#[case::metadata_gcp_host(
    "curl -H 'Metadata-Flavor: Google' http://metadata.google.internal/computeMetadata/v1/",
    High
)]
#[case::metadata_gcp_short_host("curl http://metadata/computeMetadata/v1/", High)]
#[case::metadata_bare_wget("wget -qO- 169.254.169.254", High)]
#[case::metadata_userinfo("curl http://x@169.254.169.254/", High)]
#[case::metadata_in_any_program("python3 -m http.client 169.254.169.254", Medium)]
#[case::metadata_named_by_echo("echo 169.254.169.254", Medium)]
#[case::metadata_nc("nc 169.254.169.254 80", High)]
#[case::metadata_word_is_fine("grep metadata notes.txt", Safe)]
#[case::metadata_json_path_is_fine("jq .metadata x.json", Safe)]
#[case::example_url_path_is_fine("curl -sI https://example.com/metadata", Safe)]
// False alarms: block devices named to metadata tools, search patterns.
#[case::df_block_device("df -h /dev/sda1", Safe)]
#[case::lsblk_device("lsblk /dev/sda", Safe)]
#[case::blkid_device("blkid /dev/nvme0n1p1", Safe)]
#[case::findmnt_device("findmnt /dev/vda1", Safe)]
#[case::raw_disk_read_still_high("head -c 4096 /dev/sda", High)]
#[case::grep_pattern_key_name("grep -rn id_rsa .", Safe)]
#[case::grep_pattern_env("grep -r .env src", Safe)]
#[case::grep_pattern_credentials("grep -rn credentials docs/", Safe)]
#[case::grep_pattern_e("grep -e .netrc README.md", Safe)]
#[case::grep_pattern_fixed("grep -F .pgpass notes.txt", Safe)]
#[case::grep_include_glob("grep --include=*.env -r PORT .", Safe)]
#[case::rg_pattern("rg shadow", Safe)]
#[case::rg_glob("rg -g '*.pem' BEGIN", Safe)]
#[case::git_grep_pattern("git grep -n secrets.yaml", Safe)]
#[case::grep_pattern_path_text("grep -rn '~/.ssh/id_rsa' docs", Safe)]
#[case::grep_file_operand_is_a_read("grep -n . ~/.ssh/id_rsa", High)]
#[case::grep_e_then_secret_file("grep -e x .env", High)]
#[case::grep_patterns_from_secret_file("grep -f ~/.ssh/id_rsa notes.txt", High)]
#[case::rg_secret_operand("rg x ~/.aws/credentials", High)]
fn construct(#[case] command: &str, #[case] want: Risk) {
    let got = assess(command, &PolicyConfig::default());
    assert_eq!(got.risk, want, "{command:?}: {got:#?}");
    if want != Safe {
        assert!(!got.reasons.is_empty(), "{command:?}: a non-safe verdict needs a reason");
    }
}
