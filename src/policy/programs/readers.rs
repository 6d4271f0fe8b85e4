//! Option tables of the file and text readers (coreutils, grep and friends). Each lists the options
//! known to be read-only, generously: anything else is Medium (see `options`). Options that write
//! a file or run a program are left out on purpose and named in a comment where one exists.

use super::options::{Operands, Options};

const fn opts(short: &'static str, long: &'static [&'static str]) -> Options {
    Options { short, long, words: &[], numeric: false, operands: Operands::Any }
}

const fn numeric(short: &'static str, long: &'static [&'static str]) -> Options {
    Options { short, long, words: &[], numeric: true, operands: Operands::Any }
}

// GNU ls plus the BSD letters (`-@eOT`).
pub static LS: Options = opts(
    "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1@eOI:T:w:",
    &[
        "all",
        "almost-all",
        "author",
        "escape",
        "block-size=",
        "ignore-backups",
        "color[=]",
        "colour[=]",
        "directory",
        "dired",
        "classify[=]",
        "file-type",
        "format=",
        "full-time",
        "group-directories-first",
        "no-group",
        "human-readable",
        "si",
        "dereference-command-line",
        "dereference-command-line-symlink-to-dir",
        "hide=",
        "hyperlink[=]",
        "indicator-style=",
        "inode",
        "ignore=",
        "kibibytes",
        "dereference",
        "literal",
        "numeric-uid-gid",
        "hide-control-chars",
        "show-control-chars",
        "quote-name",
        "quoting-style=",
        "reverse",
        "recursive",
        "size",
        "sort=",
        "time=",
        "time-style=",
        "tabsize=",
        "width=",
        "context",
        "zero",
    ],
);

pub static EZA: Options = opts(
    "1abdDfFgGhHilmnrRSTuUxXBL:I:s:t:",
    &[
        "oneline",
        "long",
        "grid",
        "across",
        "recurse",
        "tree",
        "classify[=]",
        "color[=]",
        "colour[=]",
        "icons[=]",
        "all",
        "list-dirs",
        "level=",
        "reverse",
        "sort=",
        "group-directories-first",
        "only-dirs",
        "only-files",
        "ignore-glob=",
        "git-ignore",
        "header",
        "group",
        "numeric",
        "inode",
        "links",
        "modified",
        "accessed",
        "created",
        "changed",
        "time=",
        "time-style=",
        "no-permissions",
        "no-filesize",
        "no-user",
        "no-time",
        "binary",
        "bytes",
        "blocksize",
        "extended",
        "git",
        "no-git",
        "octal-permissions",
        "mounts",
        "hyperlink",
        "absolute[=]",
        "width=",
        "smart-group",
        "total-size",
        "dereference",
    ],
);

pub static PWD: Options =
    Options { short: "LP", long: &["logical", "physical"], operands: Operands::AtMost(0), ..Options::NONE };

pub static STAT: Options =
    opts("LfctZc:", &["dereference", "file-system", "cached=", "format=", "printf=", "terse", "context"]);

// `du`: GNU plus BSD `-d N`, `-A`, `-g`, `-m`, `-n`, `-r`, `-I mask`.
pub static DU: Options = opts(
    "0abcDghHklLmnPrsSxAB:d:t:X:I:",
    &[
        "null", "all", "apparent-size", "block-size=", "bytes", "total", "dereference-args", "max-depth=",
        "files0-from=", "human-readable", "inodes", "dereference", "count-links", "no-dereference", "separate-dirs",
        "si", "summarize", "threshold=", "time[=]", "time-style=", "exclude-from=", "exclude=", "one-file-system",
    ],
);

pub static DF: Options = opts(
    "aghHiklmnPTvB:t:x:",
    &[
        "all", "block-size=", "human-readable", "si", "inodes", "local", "no-sync", "output[=]", "portability",
        "print-type", "sync", "total", "type=", "exclude-type=",
    ],
);

pub static REALPATH: Options = opts(
    "eLmPqsz",
    &[
        "canonicalize-existing", "canonicalize-missing", "logical", "physical", "quiet", "relative-to=",
        "relative-base=", "strip", "no-symlinks", "zero",
    ],
);

pub static READLINK: Options = opts(
    "efmnqsvz",
    &[
        "canonicalize", "canonicalize-existing", "canonicalize-missing", "no-newline", "quiet", "silent", "verbose",
        "zero",
    ],
);

pub static BASENAME: Options = opts("azs:", &["multiple", "suffix=", "zero"]);
pub static DIRNAME: Options = opts("z", &["zero"]);
pub static PATHCHK: Options = opts("pP", &["portability"]);

// BSD `cat -l` locks stdout; harmless but unknown elsewhere, so left out.
pub static CAT: Options = opts(
    "AbeEnstTuv",
    &["show-all", "number-nonblank", "show-ends", "number", "squeeze-blank", "show-tabs", "show-nonprinting"],
);

pub static TAC: Options = opts("brs:", &["before", "regex", "separator="]);

pub static HEAD: Options = numeric("qvzc:n:", &["bytes=", "lines=", "quiet", "silent", "verbose", "zero-terminated"]);

// `tail`: GNU plus BSD `-r` and `-b N`.
pub static TAIL: Options = numeric(
    "fFqrvzb:c:n:s:",
    &[
        "bytes=", "follow[=]", "lines=", "max-unchanged-stats=", "pid=", "quiet", "silent", "retry", "sleep-interval=",
        "verbose", "zero-terminated", "debug",
    ],
);

pub static WC: Options =
    opts("clmwL", &["bytes", "chars", "lines", "files0-from=", "max-line-length", "words", "total=", "debug"]);

pub static NL: Options = opts(
    "pb:d:f:h:i:l:n:s:v:w:",
    &[
        "body-numbering=", "section-delimiter=", "footer-numbering=", "header-numbering=", "line-increment=",
        "join-blank-lines=", "number-format=", "no-renumber", "number-separator=", "starting-line-number=",
        "number-width=",
    ],
);

pub static FOLD: Options = numeric("bsw:", &["bytes", "characters", "spaces", "width="]);
pub static FMT: Options = numeric(
    "cstuw:p:g:",
    &["crown-margin", "prefix=", "split-only", "tagged-paragraph", "uniform-spacing", "width=", "goal="],
);

pub static COLUMN: Options = opts(
    "dehJLntxc:C:E:H:i:l:N:o:O:p:r:R:s:S:T:W:",
    &[
        "table", "separator=", "output-separator=", "columns=", "fillrows", "table-columns=", "table-right=",
        "table-hide=", "table-wrap=", "table-truncate=", "table-noextreme=", "table-noheadings", "table-order=",
        "table-name=", "table-columns-limit=", "table-empty-lines", "tree=", "tree-id=", "tree-parent=", "json",
        "keep-empty-lines", "use-spaces=", "output-width=", "column=",
    ],
);

pub static PASTE: Options = opts("szd:", &["delimiters=", "serial", "zero-terminated"]);
pub static JOIN: Options =
    opts("iza:e:o:t:v:1:2:j:", &["ignore-case", "check-order", "nocheck-order", "header", "zero-terminated"]);
pub static COMM: Options =
    opts("123z", &["check-order", "nocheck-order", "output-delimiter=", "total", "zero-terminated"]);
pub static CUT: Options = opts(
    "nszb:c:d:f:",
    &[
        "bytes=", "characters=", "delimiter=", "fields=", "complement", "only-delimited", "output-delimiter=",
        "zero-terminated",
    ],
);
pub static TR: Options = opts("cCdst", &["complement", "delete", "squeeze-repeats", "truncate-set1"]);
pub static EXPAND: Options = numeric("it:", &["initial", "tabs="]);
pub static UNEXPAND: Options = numeric("at:", &["all", "first-only", "tabs="]);

/// `diff` and friends. Left out: `--diff-program` (sdiff, diff3: runs a program), `-o`/`--output`
/// (sdiff: writes a merged file).
const DIFF_LONG: &[&str] = &[
    "normal",
    "brief",
    "report-identical-files",
    "context[=]",
    "unified[=]",
    "ed",
    "rcs",
    "side-by-side",
    "width=",
    "left-column",
    "suppress-common-lines",
    "show-c-function",
    "show-function-line=",
    "label=",
    "expand-tabs",
    "initial-tab",
    "tabsize=",
    "suppress-blank-empty",
    "paginate",
    "recursive",
    "no-dereference",
    "new-file",
    "unidirectional-new-file",
    "ignore-file-name-case",
    "no-ignore-file-name-case",
    "exclude=",
    "exclude-from=",
    "starting-file=",
    "from-file=",
    "to-file=",
    "ignore-case",
    "ignore-tab-expansion",
    "ignore-trailing-space",
    "ignore-space-change",
    "ignore-all-space",
    "ignore-blank-lines",
    "ignore-matching-lines=",
    "text",
    "strip-trailing-cr",
    "ifdef=",
    "old-group-format=",
    "new-group-format=",
    "unchanged-group-format=",
    "changed-group-format=",
    "line-format=",
    "old-line-format=",
    "new-line-format=",
    "unchanged-line-format=",
    "minimal",
    "horizon-lines=",
    "speed-large-files",
    "color[=]",
    "palette=",
    "debug",
    "no-color",
];
pub static DIFF: Options = numeric("abBcdeEfhHilnNpPqrstTuvwyZC:D:F:I:L:S:U:W:x:X:", DIFF_LONG);
pub static DIFF3: Options = opts(
    "3aAeEimTxXL:",
    &[
        "text", "show-all", "ed", "easy-only", "merge", "label=", "initial-tab", "strip-trailing-cr", "show-overlap",
        "overlap-only",
    ],
);
pub static SDIFF: Options = opts(
    "abBdEHilstWI:w:",
    &[
        "ignore-case", "ignore-tab-expansion", "ignore-trailing-space", "ignore-space-change", "ignore-all-space",
        "ignore-blank-lines", "ignore-matching-lines=", "strip-trailing-cr", "text", "width=", "left-column",
        "suppress-common-lines", "expand-tabs", "tabsize=", "minimal", "speed-large-files",
    ],
);
pub static CMP: Options =
    opts("blsi:n:", &["print-bytes", "ignore-initial=", "verbose", "bytes=", "quiet", "silent", "zero-terminated"]);

const GREP_LONG: &[&str] = &[
    "extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "regexp=", "file=", "ignore-case",
    "no-ignore-case", "word-regexp", "line-regexp", "null-data", "no-messages", "invert-match", "max-count=",
    "byte-offset", "line-number", "no-line-number", "line-buffered", "with-filename", "no-filename", "label=",
    "only-matching", "quiet", "silent", "binary-files=", "text", "directories=", "devices=", "recursive",
    "dereference-recursive", "include=", "exclude=", "exclude-from=", "exclude-dir=", "files-without-match",
    "files-with-matches", "count", "initial-tab", "null", "before-context=", "after-context=", "context=",
    "group-separator=", "no-group-separator", "color[=]", "colour[=]", "binary", "unix-byte-offsets",
];
pub static GREP: Options = numeric("abcEFGhHiIlLnoPqrRsTuUvVwxyzZA:B:C:d:D:e:f:m:", GREP_LONG);

/// `zcat` and the other decompress-to-stdout readers (`-l` lists, `-t` tests).
pub static ZCAT: Options = opts(
    "cdfhlLnNqrtvV",
    &["stdout", "decompress", "force", "list", "name", "no-name", "quiet", "test", "verbose", "keep"],
);

// `-p/--pager` runs a program: left out.
pub static AG: Options = opts(
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
pub static ACK: Options = opts(
    "1cfghHiIklLnoQrRsvwxA:B:C:m:",
    &[
        "ignore-case", "smart-case", "word-regexp", "invert-match", "count", "files-with-matches",
        "files-without-matches", "no-filename", "with-filename", "literal", "type=", "ignore-dir=", "noignore-dir=",
        "follow", "nofollow", "sort-files", "column", "nocolor", "color", "noenv", "heading", "noheading", "break",
        "nobreak", "group", "nogroup", "context=", "after-context=", "before-context=", "max-count=", "match=",
        "recurse", "no-recurse", "nopager",
    ],
);

pub static JQ: Options = opts(
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
pub static YQ: Options = opts(
    "CeMnNPrjyI:o:p:",
    &[
        "colors", "exit-status", "no-colors", "null-input", "no-doc", "prettyPrint", "unwrapScalar", "indent=",
        "output-format=", "input-format=", "from-file=", "expression=", "raw-output", "yaml-output", "tojson",
        "header-preprocess", "front-matter=",
    ],
);

pub static STRINGS: Options = numeric(
    "adfwDn:t:e:s:T:",
    &[
        "all", "print-file-name", "bytes=", "radix=", "encoding=", "data", "target=", "output-separator=",
        "include-all-whitespace", "unicode=",
    ],
);

pub static HEXDUMP: Options = opts(
    "bcCdovxe:f:n:s:L::",
    &[
        "one-byte-octal", "one-byte-char", "canonical", "two-bytes-decimal", "two-bytes-octal", "two-bytes-hex",
        "format=", "format-file=", "color[=]", "length=", "skip=", "no-squeezing",
    ],
);

pub static OD: Options = opts(
    "bcdDfFhHiIlLoOvxXA:j:N:t:S::w::",
    &[
        "address-radix=", "skip-bytes=", "read-bytes=", "format=", "output-duplicates", "strings[=]", "width[=]",
        "endian=", "traditional",
    ],
);

// macOS `base64 -o FILE` writes a file: left out.
pub static BASE64: Options = opts(
    "dDiw:",
    &[
        "decode", "ignore-garbage", "wrap=", "base64", "base64url", "base32", "base32hex", "base16", "base2msbf",
        "base2lsbf", "z85",
    ],
);

pub static CHECKSUM: Options = opts(
    "bctwza:l:",
    &[
        "binary", "check", "tag", "text", "ignore-missing", "quiet", "status", "strict", "warn", "zero", "algorithm=",
        "length=", "base64", "raw", "untagged", "debug",
    ],
);
pub static SUM: Options = opts("rs", &["sysv"]);

pub static SEQ: Options = numeric("wf:s:", &["format=", "separator=", "equal-width"]);
pub static NUMFMT: Options = opts(
    "zd:",
    &[
        "from=", "to=", "from-unit=", "to-unit=", "padding=", "field=", "format=", "grouping", "header[=]", "invalid=",
        "round=", "suffix=", "delimiter=", "zero-terminated", "debug",
    ],
);

pub static WHICH: Options = opts(
    "asi",
    &["all", "skip-alias", "skip-dot", "skip-tilde", "show-dot", "show-tilde", "tty-only", "skip-functions"],
);
pub static WHEREIS: Options = opts("bmsulBMSf", &[]);
// `-C FILE` names a config file: left out.
pub static APROPOS: Options = opts(
    "adelrvwL:m:M:s:",
    &[
        "debug", "verbose", "regex", "wildcard", "exact", "and", "long", "section=", "sections=", "locale=",
        "systems=", "manpath=",
    ],
);
pub static LOCATE: Options = opts(
    "0AbceEiLmPqSwd:l:n:r:",
    &[
        "all", "basename", "count", "database=", "existing", "follow", "ignore-case", "limit=", "nofollow", "null",
        "statistics", "quiet", "regexp=", "regex", "wholename", "ignore-spaces", "literal",
    ],
);

// `-o FILE` (tree writes its output there) and `-R` (writes 00Tree.html files) are left out.
pub static TREE: Options = opts(
    "aCdDfFghiJlnNpqQrstuvxXH:I:L:P:T:",
    &[
        "noreport", "charset=", "filelimit=", "timefmt=", "dirsfirst", "filesfirst", "gitignore", "gitfile=",
        "matchdirs", "prune", "du", "si", "inodes", "device", "sort=", "ignore-case", "nolinks", "fromfile",
        "metafirst", "info",
    ],
);

// `--pager` runs a program: left out.
pub static BAT: Options = opts(
    "AdfLnpPSul:H:m:r:",
    &[
        "show-all", "plain", "language=", "highlight-line=", "file-name=", "diff", "diff-context=", "tabs=", "wrap=",
        "chop-long-lines", "terminal-width=", "number", "color=", "italic-text=", "decorations=", "force-colorization",
        "paging=", "map-syntax=", "theme=", "list-themes", "list-languages", "style=", "line-range=", "unbuffered",
        "no-config", "squeeze-blank", "nonprintable-notation=",
    ],
);

// `-C` compiles (writes) a magic file and `-p` resets access times: left out.
pub static FILE: Options = opts(
    "0bcdEhiklLnNrsSvzZe:f:F:m:P:",
    &[
        "brief", "mime", "mime-type", "mime-encoding", "keep-going", "list", "dereference", "no-dereference", "no-pad",
        "no-buffer", "raw", "special-files", "uncompress", "uncompress-noreport", "print0", "separator=",
        "files-from=", "magic-file=", "exclude=", "exclude-quiet=", "extension", "apple", "parameter=",
    ],
);

// Left out: `--pre`/`--pre-glob` and `-z/--search-zip` (run programs), `--hostname-bin` (runs one).
pub static RG: Options = opts(
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
pub static MAN: Options = opts(
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
pub static SORT: Options = opts(
    "bcCdfghiMmnRrsuVzk:o:S:t:T:",
    &[
        "ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort", "ignore-nonprinting",
        "month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "random-source=", "reverse", "sort=",
        "version-sort", "batch-size=", "check[=]", "debug", "files0-from=", "key=", "merge", "output=", "stable",
        "buffer-size=", "field-separator=", "temporary-directory=", "parallel=", "unique", "zero-terminated",
    ],
);

pub static UNIQ: Options = numeric(
    "cdDiuzf:s:w:",
    &[
        "count", "repeated", "all-repeated[=]", "skip-fields=", "group[=]", "ignore-case", "skip-chars=", "unique",
        "zero-terminated", "check-chars=",
    ],
);

pub static XXD: Options = Options {
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
pub static LESS: Options = numeric(
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
pub static MORE: Options =
    numeric("cdflpsun:", &["silent", "logical", "no-pause", "print-over", "clean-print", "squeeze", "plain", "lines="]);
