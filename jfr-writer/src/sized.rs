//! Size-prefixed records: every event, the metadata and each checkpoint
//! start with their total size as a varint, the size's own bytes counted.

use jfr_format::{varint_len, write_varint};

/// Appends `body` preceded by its size as a varint, the size counting itself.
pub(crate) fn write_sized(out: &mut Vec<u8>, body: &[u8]) {
    let size = sized_len(body.len());
    write_varint(out, size as u64);
    out.extend_from_slice(body);
}

/// The total size of a record whose body (after the size) is `body_len`
/// bytes: `n = body_len + varint_len(n)`.
pub(crate) fn sized_len(body_len: usize) -> usize {
    let mut size = body_len + 1;
    while body_len + varint_len(size as u64) != size {
        size = body_len + varint_len(size as u64);
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_count_themselves() {
        assert_eq!(sized_len(0), 1);
        assert_eq!(sized_len(126), 127);
        assert_eq!(sized_len(127), 129); // 127 + 2: 128 would need two bytes
        assert_eq!(sized_len(16381), 16383);
        assert_eq!(sized_len(16382), 16385);
        for body in 0..100_000 {
            let size = sized_len(body);
            assert_eq!(size, body + varint_len(size as u64));
        }
    }
}
