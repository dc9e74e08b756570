//! Random values the lab hands out: codes, secrets, refresh tokens, ids.

use base64::Engine;

/// A random token of 32 bytes as URL-safe text (codes, secrets, refresh tokens, ids).
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
