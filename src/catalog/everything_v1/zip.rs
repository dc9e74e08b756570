//! The zip archive `zip` returns: stored (uncompressed) entries with CRC-32 checksums, the
//! format JSZip writes by default.

/// CRC-32 (IEEE), as zip files need.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A zip archive of `files` (name, bytes), stored without compression (JSZip's default), with
/// a fixed 1980-01-01 timestamp so the output is reproducible.
pub fn zip_store(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let (mut out, mut central) = (Vec::new(), Vec::new());
    let le16 = |v: &mut Vec<u8>, n: u16| v.extend_from_slice(&n.to_le_bytes());
    let le32 = |v: &mut Vec<u8>, n: u32| v.extend_from_slice(&n.to_le_bytes());
    for (name, data) in files {
        let (crc, size, offset) = (crc32(data), data.len() as u32, out.len() as u32);
        let flags: u16 = if name.is_ascii() { 0 } else { 0x0800 };
        le32(&mut out, 0x0403_4b50);
        for n in [10, flags, 0, 0, 0x21] {
            le16(&mut out, n); // version, flags, method (store), time, date (1980-01-01)
        }
        for n in [crc, size, size] {
            le32(&mut out, n);
        }
        le16(&mut out, name.len() as u16);
        le16(&mut out, 0);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);

        le32(&mut central, 0x0201_4b50);
        for n in [20, 10, flags, 0, 0, 0x21] {
            le16(&mut central, n);
        }
        for n in [crc, size, size] {
            le32(&mut central, n);
        }
        for n in [name.len() as u16, 0, 0, 0, 0] {
            le16(&mut central, n);
        }
        le32(&mut central, 0);
        le32(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
    }
    let (cd_offset, cd_size) = (out.len() as u32, central.len() as u32);
    out.extend_from_slice(&central);
    le32(&mut out, 0x0605_4b50);
    for n in [0, 0, files.len() as u16, files.len() as u16] {
        le16(&mut out, n);
    }
    le32(&mut out, cd_size);
    le32(&mut out, cd_offset);
    le16(&mut out, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn crc_and_zip() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let z = zip_store(&[("a.txt".into(), b"hi".to_vec())]);
        assert_eq!(&z[..4], b"PK\x03\x04");
        assert_eq!(&z[z.len() - 22..z.len() - 18], b"PK\x05\x06");
    }
}
