//! Key and certificate tools with read-only subcommands (`openssl x509 -noout`, `gpg --list-keys`,
//! `ssh-keygen -l`), and editors and archivers whose options run commands (`vim -c`, `zip -TT`).

use super::options::{Operands, Options};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

const KEYS: &str = "creates or uses keys and certificates";

/// `openssl` reading subcommands with their single-dash options. Left out: `-out`, `-keyout`,
/// signing options, and `-engine`/`-provider`/`-config`, which load code or configuration.
static OPENSSL_READ: Options = Options {
    short: "",
    long: &[],
    words: &[
        "in=", "inform=", "noout", "text", "subject", "issuer", "dates", "startdate", "enddate", "serial",
        "fingerprint", "sha1", "sha256", "sha384", "sha512", "md5", "ext=", "purpose", "pubkey", "modulus", "email",
        "ocsp_uri", "hash", "subject_hash", "issuer_hash", "nameopt=", "certopt=", "checkend=", "checkhost=",
        "checkemail=", "checkip=", "print_certs", "verify", "CAfile=", "CApath=", "untrusted=", "trusted=",
        "partial_chain", "show_chain", "verbose", "a", "v", "hex", "base64", "r", "binary", "c", "i", "offset=",
        "length=", "strparse=", "dump", "noverify", "alias", "ocspid", "x509_strict", "attime=", "policy=",
        "crl_check", "crl_check_all", "use_deltas", "no-CAfile", "no-CApath", "no-CAstore", "subject_hash_old",
        "issuer_hash_old", "ext", "noissuer", "nocert", "print", "reqopt=", "help", "b", "o", "f", "p", "d",
        "commands", "digest-commands", "cipher-commands", "public-key-algorithms", "digest-algorithms",
        "cipher-algorithms", "s", "V", "stdname", "tls1_2", "tls1_3", "pubin", "passin=",
    ],
    numeric: true,
    operands: Operands::Any,
};

pub(crate) fn openssl<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const READS: &[&str] = &[
        "version", "x509", "req", "crl", "verify", "asn1parse", "pkcs7", "dgst", "ciphers", "list", "help", "rand",
        "errstr", "prime", "sha256", "sha1", "md5", "sha512",
    ];
    let Some(sub) = inv.args.first().map(|w| w.text.as_str()) else {
        return Verdict::medium("starts an interactive openssl prompt").into();
    };
    if !READS.contains(&sub) {
        return Verdict::medium(format!("openssl {sub} {KEYS}")).into();
    }
    if sub == "req" && !inv.has_word(&["-noout", "-text", "-verify"]) {
        return Verdict::medium("openssl req without -noout/-text creates a request").into();
    }
    OPENSSL_READ.check(&inv.after(0)).into()
}

/// `gpg` listings and verification. Left out: `--homedir` (another keyring and its config),
/// anything that imports, exports, signs, encrypts, decrypts or edits.
static GPG_READ: Options = Options {
    short: "kKqv",
    long: &[
        "list-keys",
        "list-public-keys",
        "list-secret-keys",
        "list-sigs",
        "check-sigs",
        "fingerprint",
        "list-packets",
        "verify",
        "version",
        "list-config",
        "with-colons",
        "keyid-format=",
        "with-fingerprint",
        "with-subkey-fingerprint",
        "with-keygrip",
        "list-options=",
        "verify-options=",
        "batch",
        "no-tty",
        "verbose",
        "quiet",
        "show-keys",
        "with-sig-check",
        "fixed-list-mode",
        "no-auto-check-trustdb",
        "list-signatures",
        "check-signatures",
        "locate-keys",
        "no-default-keyring",
        "status-fd=",
        "with-secret",
        "print-md=",
        "utf8-strings",
        "dump-options",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

pub(crate) fn gpg<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let lists = inv.has_word(&["-k", "-K"])
        || [
            "--list-keys", "--list-public-keys", "--list-secret-keys", "--list-sigs", "--check-sigs", "--fingerprint",
            "--verify", "--list-packets", "--list-config", "--show-keys", "--list-signatures", "--check-signatures",
            "--locate-keys", "--print-md",
        ]
        .iter()
        .any(|o| inv.has_word(&[o]));
    if !lists {
        return Verdict::medium(format!("{} {KEYS}", inv.name)).into();
    }
    GPG_READ.check(inv).into()
}

/// `ssh-keygen -l -f F` (fingerprint), `-y` (public half), `-F HOST` (look up known_hosts),
/// `-L` (show a certificate). Left out: `-H`/`-R` (rewrite known_hosts), `-D` (loads a library).
pub(crate) fn ssh_keygen<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const READ: Options =
        Options { short: "lvyLqE:f:F:", long: &[], words: &[], numeric: false, operands: Operands::AtMost(0) };
    let reads = inv.has_short('l') || inv.has_short('y') || inv.has_short('L') || inv.has_word(&["-F"]);
    if !reads {
        return Verdict::medium(format!("ssh-keygen {KEYS}")).into();
    }
    READ.check(inv).into()
}

/// `vim -c CMD`, `+CMD`, `--cmd`, `-S FILE`, `-s FILE`; `emacs --eval`/`-l`/`-f`; `gdb -ex`/`-x`:
/// an editor or debugger told to run commands is a code runner.
pub fn editor<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let texts: Vec<&str> = inv.texts().collect();
    let runs = match inv.name {
        "emacs" => texts.iter().any(|t| {
            matches!(*t, "--eval" | "-l" | "--load" | "-f" | "--funcall" | "--batch" | "-batch" | "--script" | "-x")
                || t.starts_with("--eval=")
                || t.starts_with("--load=")
        }),
        "gdb" => texts.iter().any(|t| {
            matches!(*t, "-ex" | "-x" | "--eval-command" | "--command" | "-iex" | "-ix" | "--batch" | "-batch")
                || t.starts_with("--eval-command=")
                || t.starts_with("--command=")
        }),
        "ed" => texts.iter().any(|t| t.starts_with('!')),
        _ => texts.iter().any(|t| t.starts_with('+') || matches!(*t, "-c" | "--cmd" | "-S" | "-s" | "-u")),
    };
    if runs {
        return Verdict::high(format!("{} is told to run commands (a code runner)", inv.name)).into();
    }
    let reason =
        if inv.name == "gdb" { "runs or attaches to another program" } else { "opens an editor that can change files" };
    Verdict::medium(reason).into()
}

/// `zip`/`7z`… change files; `zip -TT CMD` / `--unzip-command CMD` runs CMD.
pub(crate) fn archiver<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.name == "zip" && inv.texts().any(|t| t == "-TT" || t.starts_with("--unzip-command") || t.starts_with("-TT"))
    {
        return Verdict::high("zip -TT runs the command it is given (a code runner)").into();
    }
    if super::hardware::compressor_listing(inv) {
        return Verdict::SAFE.into();
    }
    Verdict::medium("changes files").into()
}

/// Compilers and runtimes opsai has no table for: asking for the version is Safe; anything else
/// compiles or runs code.
pub(crate) fn toolchain<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let texts: Vec<&str> = inv.texts().collect();
    if matches!(texts.as_slice(), ["-version" | "--version" | "-V" | "-v" | "version" | "-dumpversion"]) {
        return Verdict::SAFE.into();
    }
    Verdict::medium(format!("{} compiles or runs code (effect unknown)", inv.name)).into()
}
