//! `opsai config show` and `opsai config path`.

use std::io::{self, Write};
use std::path::Path;

use serde_json::Value;

use super::{Config, KeySource};

/// `opsai config show`: the effective configuration as pretty JSON on `out` (the API key masked,
/// the audit log path resolved), and one line on `notes` per value that comes from the
/// environment or a flag rather than the file. `out` is meant for stdout, `notes` for stderr, so
/// `opsai config show | jq` keeps working.
pub fn show(
    config: &Config,
    opsai_home: &Path,
    user_home: Option<&Path>,
    out: &mut impl Write,
    notes: &mut impl Write,
) -> io::Result<()> {
    let mut value = serde_json::to_value(config).map_err(io::Error::other)?;
    if let Some(llm) = value.get_mut("llm").and_then(Value::as_object_mut) {
        let masked = config.llm.api_key.as_deref().map(mask_key);
        llm.insert("api_key".to_owned(), masked.map_or(Value::Null, Value::String));
    }
    if let Some(audit) = value.get_mut("audit").and_then(Value::as_object_mut) {
        let log = config.audit_log_path(opsai_home, user_home);
        audit.insert("log_path".to_owned(), Value::String(log.display().to_string()));
    }
    serde_json::to_writer_pretty(&mut *out, &value).map_err(io::Error::other)?;
    writeln!(out)?;
    for o in config.overrides() {
        writeln!(notes, "note: {} comes from {}, not from the config file (it is not saved)", o.field.key(), o.source)?;
    }
    // Where the key comes from, never the key: a command or keyring is not read here.
    match config.key_source() {
        KeySource::None | KeySource::Override(_) => {}
        source => writeln!(notes, "note: the API key comes from {source}")?,
    }
    Ok(())
}

/// `opsai config path`: the config file's path, one line. Reads nothing, creates nothing.
pub fn write_path(config_file: &Path, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", config_file.display())
}

/// `sk-proj-abcdefgh1234` → `sk-…1234`. Keys shorter than 12 characters show nothing of themselves.
pub fn mask_key(key: &str) -> String {
    let chars: Vec<char> = key.trim().chars().collect();
    if chars.len() < 12 {
        return "****".to_owned();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::config::LlmField;

    #[test]
    fn masks_keys() {
        assert_eq!(mask_key("sk-proj-0123456789abcd"), "sk-…abcd");
        assert_eq!(mask_key("short"), "****");
        assert_eq!(mask_key("ключ-ключ-ключ-1"), "клю…юч-1", "characters, not bytes");
    }

    #[test]
    fn shows_effective_values_with_the_key_masked_and_overrides_noted() {
        let mut config = Config::default();
        config.llm.api_key = Some("sk-file-key-000000wxyz".to_owned());
        config.set_override(LlmField::Model, "gpt-4o".to_owned(), "OPSAI_MODEL");
        let (mut out, mut notes) = (Vec::new(), Vec::new());
        show(&config, Path::new("/o"), None, &mut out, &mut notes).unwrap();
        let value: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value["llm"]["model"], "gpt-4o");
        assert_eq!(value["llm"]["api_key"], "sk-…wxyz");
        assert_eq!(value["audit"]["log_path"], "/o/audit.log");
        assert!(!String::from_utf8_lossy(&out).contains("000000"));
        assert_eq!(
            String::from_utf8(notes).unwrap(),
            "note: llm.model comes from OPSAI_MODEL, not from the config file (it is not saved)\n\
             note: the API key comes from llm.api_key in the config file (in clear)\n"
        );
    }

    #[test]
    fn no_key_shows_null_and_path_is_one_line() {
        let mut out = Vec::new();
        show(&Config::default(), Path::new("/o"), None, &mut out, &mut Vec::new()).unwrap();
        let value: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value["llm"]["api_key"], Value::Null);
        let mut out = Vec::new();
        write_path(Path::new("/o/config.json"), &mut out).unwrap();
        assert_eq!(out, b"/o/config.json\n");
    }
}
