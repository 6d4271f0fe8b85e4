//! Option tables of the file and text readers (coreutils, grep and friends). Each lists the options
//! known to be read-only, generously: anything else is Medium (see `options`). Options that write
//! a file or run a program are left out on purpose and named in a comment where one exists.

use super::options::{Operands, Options};

// Search, view and encode tables live beside these; they are read through this module too.
pub(crate) use super::search_tables::*;

const fn opts(short: &'static str, long: &'static [&'static str]) -> Options {
    Options { short, long, words: &[], numeric: false, operands: Operands::Any }
}

const fn numeric(short: &'static str, long: &'static [&'static str]) -> Options {
    Options { short, long, words: &[], numeric: true, operands: Operands::Any }
}

// GNU ls plus the BSD letters (`-@eOT`).
pub(crate) static LS: Options = opts(
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

pub(crate) static EZA: Options = opts(
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

pub(crate) static STAT: Options =
    opts("LfctZc:", &["dereference", "file-system", "cached=", "format=", "printf=", "terse", "context"]);

// `du`: GNU plus BSD `-d N`, `-A`, `-g`, `-m`, `-n`, `-r`, `-I mask`.
pub(crate) static DU: Options = opts(
    "0abcDghHklLmnPrsSxAB:d:t:X:I:",
    &[
        "null", "all", "apparent-size", "block-size=", "bytes", "total", "dereference-args", "max-depth=",
        "files0-from=", "human-readable", "inodes", "dereference", "count-links", "no-dereference", "separate-dirs",
        "si", "summarize", "threshold=", "time[=]", "time-style=", "exclude-from=", "exclude=", "one-file-system",
    ],
);

pub(crate) static DF: Options = opts(
    "aghHiklmnPTvB:t:x:",
    &[
        "all", "block-size=", "human-readable", "si", "inodes", "local", "no-sync", "output[=]", "portability",
        "print-type", "sync", "total", "type=", "exclude-type=",
    ],
);

pub(crate) static REALPATH: Options = opts(
    "eLmPqsz",
    &[
        "canonicalize-existing", "canonicalize-missing", "logical", "physical", "quiet", "relative-to=",
        "relative-base=", "strip", "no-symlinks", "zero",
    ],
);

pub(crate) static READLINK: Options = opts(
    "efmnqsvz",
    &[
        "canonicalize", "canonicalize-existing", "canonicalize-missing", "no-newline", "quiet", "silent", "verbose",
        "zero",
    ],
);

pub(crate) static BASENAME: Options = opts("azs:", &["multiple", "suffix=", "zero"]);
pub(crate) static DIRNAME: Options = opts("z", &["zero"]);
pub(crate) static PATHCHK: Options = opts("pP", &["portability"]);

// BSD `cat -l` locks stdout; harmless but unknown elsewhere, so left out.
pub(crate) static CAT: Options = opts(
    "AbeEnstTuv",
    &["show-all", "number-nonblank", "show-ends", "number", "squeeze-blank", "show-tabs", "show-nonprinting"],
);

pub(crate) static TAC: Options = opts("brs:", &["before", "regex", "separator="]);

pub static HEAD: Options = numeric("qvzc:n:", &["bytes=", "lines=", "quiet", "silent", "verbose", "zero-terminated"]);

// `tail`: GNU plus BSD `-r` and `-b N`.
pub(crate) static TAIL: Options = numeric(
    "fFqrvzb:c:n:s:",
    &[
        "bytes=", "follow[=]", "lines=", "max-unchanged-stats=", "pid=", "quiet", "silent", "retry", "sleep-interval=",
        "verbose", "zero-terminated", "debug",
    ],
);

pub(crate) static WC: Options =
    opts("clmwL", &["bytes", "chars", "lines", "files0-from=", "max-line-length", "words", "total=", "debug"]);

pub(crate) static NL: Options = opts(
    "pb:d:f:h:i:l:n:s:v:w:",
    &[
        "body-numbering=", "section-delimiter=", "footer-numbering=", "header-numbering=", "line-increment=",
        "join-blank-lines=", "number-format=", "no-renumber", "number-separator=", "starting-line-number=",
        "number-width=",
    ],
);

pub(crate) static FOLD: Options = numeric("bsw:", &["bytes", "characters", "spaces", "width="]);
pub(crate) static FMT: Options = numeric(
    "cstuw:p:g:",
    &["crown-margin", "prefix=", "split-only", "tagged-paragraph", "uniform-spacing", "width=", "goal="],
);

pub(crate) static COLUMN: Options = opts(
    "dehJLntxc:C:E:H:i:l:N:o:O:p:r:R:s:S:T:W:",
    &[
        "table", "separator=", "output-separator=", "columns=", "fillrows", "table-columns=", "table-right=",
        "table-hide=", "table-wrap=", "table-truncate=", "table-noextreme=", "table-noheadings", "table-order=",
        "table-name=", "table-columns-limit=", "table-empty-lines", "tree=", "tree-id=", "tree-parent=", "json",
        "keep-empty-lines", "use-spaces=", "output-width=", "column=",
    ],
);

pub(crate) static PASTE: Options = opts("szd:", &["delimiters=", "serial", "zero-terminated"]);
pub(crate) static JOIN: Options =
    opts("iza:e:o:t:v:1:2:j:", &["ignore-case", "check-order", "nocheck-order", "header", "zero-terminated"]);
pub(crate) static COMM: Options =
    opts("123z", &["check-order", "nocheck-order", "output-delimiter=", "total", "zero-terminated"]);
pub(crate) static CUT: Options = opts(
    "nszb:c:d:f:",
    &[
        "bytes=", "characters=", "delimiter=", "fields=", "complement", "only-delimited", "output-delimiter=",
        "zero-terminated",
    ],
);
pub(crate) static TR: Options = opts("cCdst", &["complement", "delete", "squeeze-repeats", "truncate-set1"]);
pub(crate) static EXPAND: Options = numeric("it:", &["initial", "tabs="]);
pub(crate) static UNEXPAND: Options = numeric("at:", &["all", "first-only", "tabs="]);

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
pub(crate) static DIFF: Options = numeric("abBcdeEfhHilnNpPqrstTuvwyZC:D:F:I:L:S:U:W:x:X:", DIFF_LONG);
pub(crate) static DIFF3: Options = opts(
    "3aAeEimTxXL:",
    &[
        "text", "show-all", "ed", "easy-only", "merge", "label=", "initial-tab", "strip-trailing-cr", "show-overlap",
        "overlap-only",
    ],
);
pub(crate) static SDIFF: Options = opts(
    "abBdEHilstWI:w:",
    &[
        "ignore-case", "ignore-tab-expansion", "ignore-trailing-space", "ignore-space-change", "ignore-all-space",
        "ignore-blank-lines", "ignore-matching-lines=", "strip-trailing-cr", "text", "width=", "left-column",
        "suppress-common-lines", "expand-tabs", "tabsize=", "minimal", "speed-large-files",
    ],
);
pub(crate) static CMP: Options =
    opts("blsi:n:", &["print-bytes", "ignore-initial=", "verbose", "bytes=", "quiet", "silent", "zero-terminated"]);
