//! Checking a password against its argon2 PHC string in memory that is kept and reused. Each
//! check needs the hash's whole memory cost (19 MiB by default): allocated afresh on whichever
//! blocking thread ran it, the allocator kept those blocks per thread and the server grew by
//! hundreds of MiB under failed logins. At most [`KEPT`] buffers exist (the logins checked at
//! once are bounded by a semaphore of that size), and a hash asking for more than [`MAX_KIB`]
//! matches nothing instead of allocating what a hand-edited file says.

use std::sync::Mutex;

use argon2::password_hash::{Output, PasswordHash};
use argon2::{Algorithm, Argon2, Block, Params, Version};

/// Buffers kept between checks: as many as checks run at once.
pub const KEPT: usize = 2;
/// The largest memory cost accepted (64 MiB; `serve user add` writes 19 MiB).
const MAX_KIB: u32 = 64 * 1024;

static BUFFERS: Mutex<Vec<Vec<Block>>> = Mutex::new(Vec::new());

/// Whether `password` matches `hash` (a malformed or too costly hash matches nothing).
pub fn verify(password: &str, hash: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(hash) else { return false };
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else { return false };
    let Ok(algorithm) = Algorithm::try_from(parsed.algorithm) else { return false };
    let version = match parsed.version.map(Version::try_from) {
        None => Version::default(),
        Some(Ok(version)) => version,
        Some(Err(_)) => return false,
    };
    let Ok(params) = Params::try_from(&parsed) else { return false };
    if params.m_cost() > MAX_KIB {
        super::log(&format!(
            "a password hash asks for {} KiB of memory, more than the {MAX_KIB} KiB allowed: it matches nothing; \
             set the password again with `opsai serve user add`",
            params.m_cost()
        ));
        return false;
    }
    let mut salt_bytes = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_bytes) else { return false };
    let mut out = vec![0u8; expected.len()];
    let blocks = params.block_count();
    let mut memory = take(blocks);
    let hashed = Argon2::new(algorithm, version, params).hash_password_into_with_memory(
        password.as_bytes(),
        salt,
        &mut out,
        &mut memory[..blocks],
    );
    give_back(memory);
    // `Output`'s equality does not stop at the first differing byte.
    hashed.is_ok() && Output::new(&out).is_ok_and(|computed| computed == expected)
}

/// A kept buffer of at least `blocks` blocks, or a new one.
fn take(blocks: usize) -> Vec<Block> {
    let mut kept = BUFFERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut buffer = kept.pop().unwrap_or_default();
    drop(kept);
    if buffer.len() < blocks {
        buffer.resize(blocks, Block::default());
    }
    buffer
}

/// Keeps `buffer` for the next check (wiped: it held state derived from a password), unless
/// enough are kept.
fn give_back(mut buffer: Vec<Block>) {
    buffer.fill(Block::default());
    let mut kept = BUFFERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if kept.len() < KEPT {
        kept.push(buffer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only_and_a_costly_one_nothing() {
        let hash = super::super::users::hash_password("correct horse").unwrap();
        assert!(verify("correct horse", &hash));
        assert!(!verify("wrong horse", &hash));
        assert!(verify("correct horse", &hash), "a kept buffer gives the same answer");
        assert!(!verify("x", "$argon2id$v=19$m=4194304,t=1,p=1$c29tZXNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"));
        assert!(!verify("x", "not a hash"));
        assert!(BUFFERS.lock().unwrap().len() <= KEPT);
    }
}
