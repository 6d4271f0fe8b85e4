//! The local time zone for audit timestamps, found without a time zone database.
//!
//! `jiff::Zoned::now()` asks jiff's system zone lookup, which, to turn the name behind
//! `/etc/localtime` into a zone, lists the whole zoneinfo tree (a few thousand `stat`s and reads
//! of directories) on the first lookup of every process: measurable on each one-shot run. The zone
//! is a single TZif file, so it is read directly: `$TZ` (a path, a POSIX rule or a zone name
//! under `$TZDIR`), else `/etc/localtime`, else UTC.

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use jiff::civil::DateTime;
use jiff::tz::TimeZone;

/// The local wall-clock time now.
pub fn now() -> DateTime {
    zone().to_datetime(jiff::Timestamp::now())
}

/// This process's local zone, looked up once.
pub(crate) fn zone() -> &'static TimeZone {
    static ZONE: OnceLock<TimeZone> = OnceLock::new();
    ZONE.get_or_init(|| {
        let tz = std::env::var("TZ").ok();
        let dir = std::env::var_os("TZDIR").map_or_else(|| PathBuf::from("/usr/share/zoneinfo"), PathBuf::from);
        zone_from(tz.as_deref(), Path::new("/etc/localtime"), &dir)
    })
}

/// `tz`: the value of `$TZ`; `localtime`: the system's zone file; `zoneinfo`: where names live.
pub(super) fn zone_from(tz: Option<&str>, localtime: &Path, zoneinfo: &Path) -> TimeZone {
    let Some(spec) = tz else {
        let name = std::fs::read_link(localtime)
            .ok()
            .and_then(|target| Some(target.to_str()?.rsplit_once("zoneinfo/")?.1.to_owned()))
            .unwrap_or_else(|| "Local".to_owned());
        return tzif(&name, localtime).unwrap_or(TimeZone::UTC);
    };
    // POSIX: an empty TZ is UTC; a leading ':' is implementation-defined (a name or a path here).
    let spec = spec.strip_prefix(':').unwrap_or(spec);
    if spec.is_empty() {
        return TimeZone::UTC;
    }
    if spec.starts_with('/') {
        return tzif(spec, Path::new(spec)).unwrap_or(TimeZone::UTC);
    }
    let relative = Path::new(spec);
    let plain_name = relative.components().all(|part| matches!(part, Component::Normal(_)));
    let named = plain_name.then(|| tzif(spec, &zoneinfo.join(relative))).flatten();
    named.or_else(|| TimeZone::posix(spec).ok()).unwrap_or(TimeZone::UTC)
}

fn tzif(name: &str, path: &Path) -> Option<TimeZone> {
    let data = std::fs::read(path).ok()?;
    TimeZone::tzif(name, &data).ok()
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;

    use super::*;

    const SYSTEM_ZONEINFO: &str = "/usr/share/zoneinfo";

    fn offset_hours(zone: &TimeZone) -> i32 {
        // A January instant: no daylight saving time in the northern zones used here.
        let instant: Timestamp = "2026-01-15T12:00:00Z".parse().unwrap();
        zone.to_offset(instant).seconds() / 3600
    }

    /// A private `…/zoneinfo` tree holding Asia/Tokyo, when this machine has the file to copy.
    struct Zoneinfo(tempfile::TempDir);

    impl Zoneinfo {
        fn path(&self) -> PathBuf {
            self.0.path().join("zoneinfo")
        }
    }

    fn zoneinfo_with_tokyo() -> Option<Zoneinfo> {
        let data = std::fs::read(Path::new(SYSTEM_ZONEINFO).join("Asia/Tokyo")).ok()?;
        let dir = Zoneinfo(tempfile::tempdir().unwrap());
        std::fs::create_dir_all(dir.path().join("Asia")).unwrap();
        std::fs::write(dir.path().join("Asia/Tokyo"), data).unwrap();
        Some(dir)
    }

    #[test]
    fn the_localtime_link_names_the_zone_and_its_file_is_read_directly() {
        let Some(zoneinfo) = zoneinfo_with_tokyo() else { return };
        let localtime = zoneinfo.0.path().join("localtime");
        std::os::unix::fs::symlink(zoneinfo.path().join("Asia/Tokyo"), &localtime).unwrap();
        let zone = zone_from(None, &localtime, Path::new("/nonexistent"));
        assert_eq!((zone.iana_name(), offset_hours(&zone)), (Some("Asia/Tokyo"), 9));
    }

    #[test]
    fn tz_names_a_zone_a_file_or_a_posix_rule() {
        let Some(zoneinfo) = zoneinfo_with_tokyo() else { return };
        let missing = Path::new("/nonexistent/localtime");
        assert_eq!(offset_hours(&zone_from(Some("Asia/Tokyo"), missing, &zoneinfo.path())), 9);
        assert_eq!(offset_hours(&zone_from(Some(":Asia/Tokyo"), missing, &zoneinfo.path())), 9);
        let path = zoneinfo.path().join("Asia/Tokyo").display().to_string();
        assert_eq!(offset_hours(&zone_from(Some(&path), missing, &zoneinfo.path())), 9);
        assert_eq!(offset_hours(&zone_from(Some("EST5EDT,M3.2.0,M11.1.0"), missing, &zoneinfo.path())), -5);
    }

    #[test]
    fn anything_unreadable_is_utc() {
        let empty = tempfile::tempdir().unwrap();
        let missing = empty.path().join("localtime");
        for tz in [None, Some(""), Some("Mars/Olympus"), Some("../../etc/passwd"), Some("/etc/hostname")] {
            assert_eq!(zone_from(tz, &missing, empty.path()), TimeZone::UTC, "TZ={tz:?}");
        }
    }
}
