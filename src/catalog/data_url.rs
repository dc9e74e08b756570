//! `data:` URLs decoded the way Node's `fetch` reads them: the one source of file bytes both
//! reference surfaces accept without network access (`gzip-file-as-resource`, v1 `zip`).

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;

/// The bytes of a `data:` URL (base64 or percent-encoded payload); `None` for another scheme
/// or a malformed URL. The scheme and `;base64` marker match in any case, and whitespace or
/// `%XX` escapes inside base64 are tolerated, as in Node.
pub fn bytes(url: &str) -> Option<Vec<u8>> {
    let rest = url
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("data:"))
        .map(|_| &url[5..])?;
    let (meta, data) = rest.split_once(',')?;
    if meta.to_ascii_lowercase().trim_end().ends_with(";base64") {
        let compact: String = String::from_utf8_lossy(&percent_decode(data))
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let unpadded = compact.trim_end_matches('=');
        STANDARD
            .decode(unpadded)
            .or_else(|_| STANDARD_NO_PAD.decode(unpadded))
            .ok()
    } else {
        Some(percent_decode(data))
    }
}

/// Decodes `%XX` escapes; a `%` not followed by two hex digits stays as it is.
fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn base64_and_percent_payloads() {
        assert_eq!(bytes("data:text/plain;base64,SGVsbG8=").unwrap(), b"Hello");
        assert_eq!(bytes("data:text/plain;base64,SGk=").unwrap(), b"Hi");
        assert_eq!(bytes("DATA:;BASE64,SGk").unwrap(), b"Hi");
        assert_eq!(bytes("data:,Hello%20world").unwrap(), b"Hello world");
        assert_eq!(bytes("data:,100%").unwrap(), b"100%");
    }

    #[test]
    fn other_schemes_and_malformed_urls_are_refused() {
        assert_eq!(bytes("file:///etc/passwd"), None);
        assert_eq!(bytes("data:no-comma"), None);
        assert_eq!(bytes("data:;base64,@@@"), None);
    }
}
