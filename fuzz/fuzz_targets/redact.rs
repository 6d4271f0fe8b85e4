//! The redactor on arbitrary text and command lines: no panic; redacting twice changes nothing;
//! a command line keeps every operator and line break (a secret is masked inside one word only).

#![no_main]

use libfuzzer_sys::fuzz_target;
use opsai::redact::Redactor;

fuzz_target!(|s: &str| {
    let redactor = Redactor::new([("MY_TOKEN".to_owned(), "s3cr3tvalue".to_owned())]);
    let once = redactor.redact(s);
    assert_eq!(redactor.redact(&once), once);
    let command = redactor.redact_command(s);
    assert_eq!(redactor.redact_command(&command), command);
    for operator in [';', '|', '&', '\n', '(', ')'] {
        let unquoted = !s.contains(['\'', '"', '\\', '#', '<', '`']);
        if unquoted {
            assert_eq!(command.matches(operator).count(), s.matches(operator).count(), "{s:?} -> {command:?}");
        }
    }
});
