//! Option tables of the searchers, viewers, encoders and sorters (grep, rg, jq, less, man, sort,
//! xxd…), split from `readers.rs` to keep files short. Options that write a file or run a
//! program are left out on purpose and named in a comment where one exists.

use super::options::{Operands, Options};

const fn opts(short: &'static str, long: &'static [&'static str]) -> Options {
    Options { short, long, words: &[], numeric: false, operands: Operands::Any }
}

const fn numeric(short: &'static str, long: &'static [&'static str]) -> Options {
    Options { short, long, words: &[], numeric: true, operands: Operands::Any }
}

const GREP_LONG: &[&str] = &[
    "extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "regexp=", "file=", "ignore-case",
    "no-ignore-case", "word-regexp", "line-regexp", "null-data", "no-messages", "invert-match", "max-count=",
    "byte-offset", "line-number", "no-line-number", "line-buffered", "with-filename", "no-filename", "label=",
    "only-matching", "quiet", "silent", "binary-files=", "text", "directories=", "devices=", "recursive",
    "dereference-recursive", "include=", "exclude=", "exclude-from=", "exclude-dir=", "files-without-match",
    "files-with-matches", "count", "initial-tab", "null", "before-context=", "after-context=", "context=",
    "group-separator=", "no-group-separator", "color[=]", "colour[=]", "binary", "unix-byte-offsets",
];
pub(crate) static GREP: Options = numeric("abcEFGhHiIlLnoPqrRsTuUvVwxyzZA:B:C:d:D:e:f:m:", GREP_LONG);

/// `zcat` and the other decompress-to-stdout readers (`-l` lists, `-t` tests).
pub(crate) static ZCAT: Options = opts(
    "cdfhlLnNqrtvV",
    &["stdout", "decompress", "force", "list", "name", "no-name", "quiet", "test", "verbose", "keep"],
);

// `-p/--pager` runs a program: left out.
pub(crate) static AG: Options = opts(
    "0aDfHhiLlnQrsStuUvVwzA:B:C:G:g:m:",
    &[
        "ignore=", "ignore-case", "case-sensitive", "smart-case", "literal", "hidden", "skip-vcs-ignores",
        "unrestricted", "files-with-matches", "files-without-matches", "count", "column", "nocolor", "color",
        "noheading", "heading", "nogroup", "group", "filename", "nofilename", "line-numbers", "numbers", "vimgrep",
        "context=", "after=", "before=", "depth=", "max-count=", "file-search-regex=", "only-matching", "word-regexp",
        "print-long-lines", "stats", "silent", "search-zip", "ignore-dir=", "follow", "one-device", "all-types",
        "all-text", "invert-match", "null", "print0", "width=",
    ],
);

// `--pager` runs a program and `--output` evaluates a Perl expression: left out.
pub(crate) static ACK: Options = opts(
    "1cfghHiIklLnoQrRsvwxA:B:C:m:",
    &[
        "ignore-case", "smart-case", "word-regexp", "invert-match", "count", "files-with-matches",
        "files-without-matches", "no-filename", "with-filename", "literal", "type=", "ignore-dir=", "noignore-dir=",
        "follow", "nofollow", "sort-files", "column", "nocolor", "color", "noenv", "heading", "noheading", "break",
        "nobreak", "group", "nogroup", "context=", "after-context=", "before-context=", "max-count=", "match=",
        "recurse", "no-recurse", "nopager",
    ],
);

pub(crate) static JQ: Options = opts(
    "aCcehjMnrRsSL:f:",
    &[
        "null-input", "raw-input", "slurp", "compact-output", "raw-output", "raw-output0", "join-output",
        "ascii-output", "sort-keys", "color-output", "monochrome-output", "tab", "indent=", "unbuffered", "stream",
        "stream-errors", "seq", "exit-status", "arg=", "argjson=", "slurpfile=", "rawfile=", "args", "jsonargs",
        "from-file=", "yaml-input", "yaml-output",
    ],
);

// mikefarah yq and the Python yq wrapper. Left out: `-i/--inplace` (edits files), `-s/--split-exp`
// (writes a file per document).
pub(crate) static YQ: Options = opts(
    "CeMnNPrjyI:o:p:",
    &[
        "colors", "exit-status", "no-colors", "null-input", "no-doc", "prettyPrint", "unwrapScalar", "indent=",
        "output-format=", "input-format=", "from-file=", "expression=", "raw-output", "yaml-output", "tojson",
        "header-preprocess", "front-matter=",
    ],
);

pub(crate) static STRINGS: Options = numeric(
    "adfwDn:t:e:s:T:",
    &[
        "all", "print-file-name", "bytes=", "radix=", "encoding=", "data", "target=", "output-separator=",
        "include-all-whitespace", "unicode=",
    ],
);

pub(crate) static HEXDUMP: Options = opts(
    "bcCdovxe:f:n:s:L::",
    &[
        "one-byte-octal", "one-byte-char", "canonical", "two-bytes-decimal", "two-bytes-octal", "two-bytes-hex",
        "format=", "format-file=", "color[=]", "length=", "skip=", "no-squeezing",
    ],
);

pub(crate) static OD: Options = opts(
    "bcdDfFhHiIlLoOvxXA:j:N:t:S::w::",
    &[
        "address-radix=", "skip-bytes=", "read-bytes=", "format=", "output-duplicates", "strings[=]", "width[=]",
        "endian=", "traditional",
    ],
);

// macOS `base64 -o FILE` writes a file: left out.
pub(crate) static BASE64: Options = opts(
    "dDiw:",
    &[
        "decode", "ignore-garbage", "wrap=", "base64", "base64url", "base32", "base32hex", "base16", "base2msbf",
        "base2lsbf", "z85",
    ],
);

pub(crate) static CHECKSUM: Options = opts(
    "bctwza:l:",
    &[
        "binary", "check", "tag", "text", "ignore-missing", "quiet", "status", "strict", "warn", "zero", "algorithm=",
        "length=", "base64", "raw", "untagged", "debug",
    ],
);
pub(crate) static SUM: Options = opts("rs", &["sysv"]);

pub(crate) static SEQ: Options = numeric("wf:s:", &["format=", "separator=", "equal-width"]);
pub(crate) static NUMFMT: Options = opts(
    "zd:",
    &[
        "from=", "to=", "from-unit=", "to-unit=", "padding=", "field=", "format=", "grouping", "header[=]", "invalid=",
        "round=", "suffix=", "delimiter=", "zero-terminated", "debug",
    ],
);

pub(crate) static WHICH: Options = opts(
    "asi",
    &["all", "skip-alias", "skip-dot", "skip-tilde", "show-dot", "show-tilde", "tty-only", "skip-functions"],
);
pub(crate) static WHEREIS: Options = opts("bmsulBMSf", &[]);
// `-C FILE` names a config file: left out.
pub(crate) static APROPOS: Options = opts(
    "adelrvwL:m:M:s:",
    &[
        "debug", "verbose", "regex", "wildcard", "exact", "and", "long", "section=", "sections=", "locale=",
        "systems=", "manpath=",
    ],
);
pub(crate) static LOCATE: Options = opts(
    "0AbceEiLmPqSwd:l:n:r:",
    &[
        "all", "basename", "count", "database=", "existing", "follow", "ignore-case", "limit=", "nofollow", "null",
        "statistics", "quiet", "regexp=", "regex", "wholename", "ignore-spaces", "literal",
    ],
);

// `-o FILE` (tree writes its output there) and `-R` (writes 00Tree.html files) are left out.
pub(crate) static TREE: Options = opts(
    "aCdDfFghiJlnNpqQrstuvxXH:I:L:P:T:",
    &[
        "noreport", "charset=", "filelimit=", "timefmt=", "dirsfirst", "filesfirst", "gitignore", "gitfile=",
        "matchdirs", "prune", "du", "si", "inodes", "device", "sort=", "ignore-case", "nolinks", "fromfile",
        "metafirst", "info",
    ],
);

// `--pager` runs a program: left out.
pub(crate) static BAT: Options = opts(
    "AdfLnpPSul:H:m:r:",
    &[
        "show-all", "plain", "language=", "highlight-line=", "file-name=", "diff", "diff-context=", "tabs=", "wrap=",
        "chop-long-lines", "terminal-width=", "number", "color=", "italic-text=", "decorations=", "force-colorization",
        "paging=", "map-syntax=", "theme=", "list-themes", "list-languages", "style=", "line-range=", "unbuffered",
        "no-config", "squeeze-blank", "nonprintable-notation=",
    ],
);

// `-C` compiles (writes) a magic file and `-p` resets access times: left out.
pub(crate) static FILE: Options = opts(
    "0bcdEhiklLnNrsSvzZe:f:F:m:P:",
    &[
        "brief", "mime", "mime-type", "mime-encoding", "keep-going", "list", "dereference", "no-dereference", "no-pad",
        "no-buffer", "raw", "special-files", "uncompress", "uncompress-noreport", "print0", "separator=",
        "files-from=", "magic-file=", "exclude=", "exclude-quiet=", "extension", "apple", "parameter=",
    ],
);

// Left out: `--pre`/`--pre-glob` and `-z/--search-zip` (run programs), `--hostname-bin` (runs one).
pub(crate) static RG: Options = opts(
    "0abcFhHiIlLnNoOpPqsSuUvVwxA:B:C:d:e:E:f:g:j:m:M:r:t:T:",
    &[
        "after-context=",
        "before-context=",
        "context=",
        "count",
        "count-matches",
        "files",
        "files-with-matches",
        "files-without-match",
        "fixed-strings",
        "glob=",
        "iglob=",
        "hidden",
        "no-hidden",
        "no-ignore",
        "no-ignore-vcs",
        "no-ignore-parent",
        "no-ignore-global",
        "no-ignore-dot",
        "no-ignore-exclude",
        "no-ignore-files",
        "ignore-file=",
        "ignore-case",
        "smart-case",
        "case-sensitive",
        "line-number",
        "no-line-number",
        "max-count=",
        "max-depth=",
        "max-filesize=",
        "multiline",
        "multiline-dotall",
        "null",
        "null-data",
        "only-matching",
        "pcre2",
        "quiet",
        "regexp=",
        "replace=",
        "sort=",
        "sortr=",
        "stats",
        "text",
        "threads=",
        "type=",
        "type-not=",
        "type-list",
        "type-add=",
        "unrestricted",
        "vimgrep",
        "json",
        "word-regexp",
        "line-regexp",
        "follow",
        "heading",
        "no-heading",
        "with-filename",
        "no-filename",
        "color=",
        "colors=",
        "column",
        "no-column",
        "trim",
        "invert-match",
        "no-messages",
        "no-config",
        "engine=",
        "encoding=",
        "passthru",
        "glob-case-insensitive",
        "max-columns=",
        "max-columns-preview",
        "byte-offset",
        "path-separator=",
        "crlf",
        "one-file-system",
        "binary",
        "debug",
        "trace",
        "field-context-separator=",
        "field-match-separator=",
        "context-separator=",
        "no-context-separator",
        "include-zero",
        "line-buffered",
        "block-buffered",
        "mmap",
        "no-mmap",
        "hyperlink-format=",
        "pretty",
        "no-unicode",
        "auto-hybrid-regex",
        "dfa-size-limit=",
        "regex-size-limit=",
        "files-with-matches",
        "sort-files",
        "no-require-git",
    ],
);

// Left out: `-P/--pager`, `-H/--html` (browser), `-X`, `-C/--config-file`, `-p/--preprocessor`,
// `--catman` and `-u/--update` (write caches).
pub(crate) static MAN: Options = opts(
    "7acdDfhiIkKlLtwWZE:e:L:m:M:R:s:S:",
    &[
        "all", "apropos", "whatis", "where", "path", "location", "where-cat", "location-cat", "local-file", "default",
        "debug", "regex", "wildcard", "names-only", "no-subpages", "no-hyphenation", "no-justification", "ascii",
        "encoding=", "locale=", "manpath=", "sections=", "systems=", "extension=", "ignore-case", "match-case",
        "warnings[=]",
    ],
);

// `-o FILE`/`--output=FILE` is vetted by `files::sort` before this table is read; the
// compress program (runs one) is left out.
pub(crate) static SORT: Options = opts(
    "bcCdfghiMmnRrsuVzk:o:S:t:T:",
    &[
        "ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort", "ignore-nonprinting",
        "month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "random-source=", "reverse", "sort=",
        "version-sort", "batch-size=", "check[=]", "debug", "files0-from=", "key=", "merge", "output=", "stable",
        "buffer-size=", "field-separator=", "temporary-directory=", "parallel=", "unique", "zero-terminated",
    ],
);

pub(crate) static UNIQ: Options = numeric(
    "cdDiuzf:s:w:",
    &[
        "count", "repeated", "all-repeated[=]", "skip-fields=", "group[=]", "ignore-case", "skip-chars=", "unique",
        "zero-terminated", "check-chars=",
    ],
);

pub(crate) static XXD: Options = Options {
    short: "abCdEehiprRuvc:g:l:n:o:s:",
    long: &[],
    words: &[
        "cols=", "len=", "seek=", "bits", "ps", "plain", "postscript", "include", "revert", "groupsize=", "name=",
        "offset=", "autoskip", "capitalize", "EBCDIC", "uppercase", "version", "help", "decimal", "little-endian",
    ],
    numeric: false,
    operands: Operands::Any,
};

// `less` and friends. Left out: `-k`/`--lesskey-file` (key bindings can run commands), `-o`/`-O`
// and the log-file options (write a file). `+cmd` operands are vetted by `text::pager`.
pub(crate) static LESS: Options = numeric(
    "aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWXb:h:j:p:P:t:T:x:y:z:#:",
    &[
        "quit-at-eof", "QUIT-AT-EOF", "quit-if-one-screen", "ignore-case", "IGNORE-CASE", "long-prompt", "LONG-PROMPT",
        "raw-control-chars", "RAW-CONTROL-CHARS", "chop-long-lines", "no-init", "line-numbers", "LINE-NUMBERS",
        "squeeze-blank-lines", "status-column", "tabs=", "window=", "pattern=", "prompt=", "follow-name", "mouse",
        "wheel-lines=", "header=", "incsearch", "use-color", "quotes=", "jump-target=", "shift=", "silent", "QUIET",
        "quiet", "no-keypad", "underline-special", "hilite-search", "HILITE-SEARCH", "hilite-unread", "HILITE-UNREAD",
        "buffers=", "search-skip-screen", "redraw-on-quit", "exit-follow-on-close", "no-histdups", "no-number-headers",
        "no-search-headers", "no-vbell", "tilde",
    ],
);
pub(crate) static MORE: Options =
    numeric("cdflpsun:", &["silent", "logical", "no-pause", "print-over", "clean-print", "squeeze", "plain", "lines="]);
