//! A bounds-checked cursor over bytes of a recording: every read checks its
//! length first, so malformed input is an error naming the offset, never a
//! panic or an allocation sized by an unchecked number.

use jfr_writer::format::{MAX_VARINT_LEN, StringEncoding, read_varint};

use super::ReadError;

/// A position in a byte slice that stands at `base` in the file.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    position: usize,
    base: u64,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`, which stands at offset `base` in the file.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            position: 0,
            base,
        }
    }

    /// The file offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.position as u64
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.position
    }

    /// An error at the current offset.
    pub fn error(&self, expected: impl Into<String>) -> ReadError {
        ReadError::Malformed {
            offset: self.offset(),
            expected: expected.into(),
        }
    }

    /// The next `len` bytes.
    pub fn bytes(&mut self, len: usize, what: &str) -> Result<&'a [u8], ReadError> {
        if len > self.remaining() {
            return Err(self.error(format!(
                "{what}: {len} bytes, but only {} remain",
                self.remaining()
            )));
        }
        let bytes = &self.data[self.position..self.position + len];
        self.position += len;
        Ok(bytes)
    }

    /// The next `N` bytes, as an array.
    pub fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], ReadError> {
        let mut array = [0; N];
        array.copy_from_slice(self.bytes(N, what)?);
        Ok(array)
    }

    /// One byte.
    pub fn u8(&mut self, what: &str) -> Result<u8, ReadError> {
        Ok(self.bytes(1, what)?[0])
    }

    /// A varint.
    #[inline]
    pub fn varint(&mut self, what: &str) -> Result<u64, ReadError> {
        let rest = &self.data[self.position..];
        // Most varints are one byte (type ids, pool keys, small numbers).
        if let Some(&byte) = rest.first() {
            if byte < 0x80 {
                self.position += 1;
                return Ok(byte as u64);
            }
        }
        // With nine bytes at hand (the most a varint takes), decode without
        // a bounds check per byte; near the end, the checked decoder.
        if let Some(bytes) = rest.first_chunk::<MAX_VARINT_LEN>() {
            let mut value = 0;
            for (i, &byte) in bytes[..MAX_VARINT_LEN - 1].iter().enumerate() {
                value |= ((byte & 0x7f) as u64) << (7 * i);
                if byte < 0x80 {
                    self.position += i + 1;
                    return Ok(value);
                }
            }
            // The ninth byte is taken whole.
            self.position += MAX_VARINT_LEN;
            return Ok(value | (bytes[MAX_VARINT_LEN - 1] as u64) << 56);
        }
        self.varint_near_end(what)
    }

    #[cold]
    fn varint_near_end(&mut self, what: &str) -> Result<u64, ReadError> {
        let (value, len) = read_varint(&self.data[self.position..])
            .map_err(|_| self.error(format!("{what}: a varint, but the data ends")))?;
        self.position += len;
        Ok(value)
    }

    /// A count of items that each take at least one byte: checked against
    /// the bytes left, so a corrupt count cannot make us allocate.
    pub fn count(&mut self, what: &str) -> Result<usize, ReadError> {
        let at = self.offset();
        let count = self.varint(what)?;
        if count > self.remaining() as u64 {
            return Err(ReadError::Malformed {
                offset: at,
                expected: format!(
                    "{what}: {count} items, but only {} bytes remain",
                    self.remaining()
                ),
            });
        }
        Ok(count as usize)
    }

    /// A string value (any of the six encodings). `None` is null; pool
    /// references (encoding 2) are refused here and handled by the caller.
    pub fn string(&mut self, what: &str) -> Result<Option<String>, ReadError> {
        let at = self.offset();
        let tag = self.u8(what)?;
        let encoding = StringEncoding::from_tag(tag).ok_or_else(|| ReadError::Malformed {
            offset: at,
            expected: format!("{what}: a string encoding 0 to 5, found {tag}"),
        })?;
        Ok(match encoding {
            StringEncoding::Null => None,
            StringEncoding::Empty => Some(String::new()),
            StringEncoding::Utf8 => {
                let len = self.count(what)?;
                let bytes = self.bytes(len, what)?;
                // Valid UTF-8 (nearly always) is checked and copied at once;
                // invalid sequences become U+FFFD, as the JDK reads them.
                Some(match std::str::from_utf8(bytes) {
                    Ok(text) => text.to_owned(),
                    Err(_) => String::from_utf8_lossy(bytes).into_owned(),
                })
            }
            StringEncoding::Latin1 => {
                let len = self.count(what)?;
                Some(self.bytes(len, what)?.iter().map(|&b| b as char).collect())
            }
            StringEncoding::CharArray => {
                let len = self.count(what)?;
                let mut units = Vec::with_capacity(len);
                for _ in 0..len {
                    units.push(self.varint(what)? as u16);
                }
                Some(String::from_utf16_lossy(&units))
            }
            StringEncoding::ConstantPool => {
                return Err(ReadError::Malformed {
                    offset: at,
                    expected: format!("{what}: an inline string, found a constant-pool reference"),
                });
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_check_their_length_and_name_the_offset() {
        let mut cursor = Cursor::new(&[0x80, 0x80], 1000);
        let error = cursor.varint("event size").unwrap_err().to_string();
        assert!(
            error.contains("byte 1000") && error.contains("event size"),
            "{error}"
        );
        let mut cursor = Cursor::new(&[3, 0xff, 0xff, 0xff, 0x0f], 0);
        let error = cursor.string("class name").unwrap_err().to_string();
        // The length (2^25 - 1) is checked against what is left: no allocation.
        assert!(
            error.contains("byte 1: expected class name: 33554431 items, but only 0 bytes remain"),
            "{error}"
        );
    }

    #[test]
    fn every_string_encoding() {
        let mut data = vec![0, 1];
        data.extend([3, 2, b'h', b'i']);
        data.extend([4, 2, 0xba, 0x4c, 0x41]); // char array: U+263A (varint ba 4c), then 'A'
        data.extend([5, 1, 0xe9]); // Latin-1 é
        let mut cursor = Cursor::new(&data, 0);
        assert_eq!(cursor.string("s").unwrap(), None);
        assert_eq!(cursor.string("s").unwrap(), Some(String::new()));
        assert_eq!(cursor.string("s").unwrap(), Some("hi".to_owned()));
        assert_eq!(cursor.string("s").unwrap(), Some("\u{263a}A".to_owned()));
        assert_eq!(cursor.string("s").unwrap(), Some("é".to_owned()));
        assert_eq!(cursor.remaining(), 0);
    }
}
