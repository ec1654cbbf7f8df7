//! A bounds-checked cursor over bytes of a recording: every read checks its
//! length first, so malformed input is an error naming the offset, never a
//! panic or an allocation sized by an unchecked number.

use std::borrow::Cow;

use jfr_format::{StringEncoding, TruncatedVarint, read_varint_at};

use crate::ReadError;

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
    #[inline]
    pub fn bytes(&mut self, len: usize, what: &str) -> Result<&'a [u8], ReadError> {
        if len > self.remaining() {
            return Err(self.ended(len, what));
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
    #[inline]
    pub fn u8(&mut self, what: &str) -> Result<u8, ReadError> {
        match self.data.get(self.position) {
            Some(&byte) => {
                self.position += 1;
                Ok(byte)
            }
            None => Err(self.ended(1, what)),
        }
    }

    /// The error of [`bytes`](Self::bytes) when fewer than `len` remain.
    #[cold]
    fn ended(&self, len: usize, what: &str) -> ReadError {
        self.error(format!(
            "{what}: {len} bytes, but only {} remain",
            self.remaining()
        ))
    }

    /// A varint (the format's: [`read_varint_at`]).
    #[inline(always)]
    pub fn varint(&mut self, what: &str) -> Result<u64, ReadError> {
        match read_varint_at(self.data, self.position) {
            Ok((value, len)) => {
                self.position += len;
                Ok(value)
            }
            Err(TruncatedVarint) => Err(self.varint_ends(what)),
        }
    }

    #[cold]
    fn varint_ends(&self, what: &str) -> ReadError {
        self.error(format!("{what}: a varint, but the data ends"))
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
        Ok(self.borrowed_string(what)?.map(Cow::into_owned))
    }

    /// A string value as [`string`](Self::string) reads it, borrowed from
    /// the bytes when they are valid UTF-8 (nearly always), so a caller
    /// that only copies it somewhere need not allocate it first.
    pub fn borrowed_string(&mut self, what: &str) -> Result<Option<Cow<'a, str>>, ReadError> {
        let at = self.offset();
        Ok(match self.raw_string(what, false)? {
            RawString::Null => None,
            RawString::Utf8(bytes) => Some(String::from_utf8_lossy(bytes)),
            RawString::Text(text) => Some(text),
            RawString::Pooled(_) => return Err(pooled_string(at, what)),
        })
    }

    /// A string value in any of the six encodings, UTF-8 bytes left
    /// unchecked (a caller that copies them may check them as it copies).
    /// A pool reference (encoding 2) is read when `pooled` allows it, its
    /// key named `a string pool key`; otherwise it is an error at its tag.
    #[inline(always)]
    pub fn raw_string(&mut self, what: &str, pooled: bool) -> Result<RawString<'a>, ReadError> {
        let at = self.offset();
        let tag = self.u8(what)?;
        if tag == StringEncoding::Utf8 as u8 {
            let len = self.count(what)?;
            return Ok(RawString::Utf8(self.bytes(len, what)?));
        }
        if pooled && tag == StringEncoding::ConstantPool as u8 {
            return Ok(RawString::Pooled(self.varint("a string pool key")?));
        }
        self.other_string(at, tag, what)
    }

    /// The encodings [`raw_string`](Self::raw_string) does not read inline.
    #[inline(never)]
    fn other_string(&mut self, at: u64, tag: u8, what: &str) -> Result<RawString<'a>, ReadError> {
        let encoding = StringEncoding::from_tag(tag).ok_or_else(|| ReadError::Malformed {
            offset: at,
            expected: format!("{what}: a string encoding 0 to 5, found {tag}"),
        })?;
        Ok(match encoding {
            StringEncoding::Null => RawString::Null,
            StringEncoding::Empty => RawString::Text(Cow::Borrowed("")),
            StringEncoding::Utf8 => {
                let len = self.count(what)?;
                RawString::Utf8(self.bytes(len, what)?)
            }
            StringEncoding::Latin1 => {
                let len = self.count(what)?;
                RawString::Text(Cow::Owned(
                    self.bytes(len, what)?.iter().map(|&b| b as char).collect(),
                ))
            }
            StringEncoding::CharArray => {
                let len = self.count(what)?;
                let mut units = Vec::with_capacity(len);
                for _ in 0..len {
                    units.push(self.varint(what)? as u16);
                }
                RawString::Text(Cow::Owned(String::from_utf16_lossy(&units)))
            }
            StringEncoding::ConstantPool => return Err(pooled_string(at, what)),
        })
    }
}

/// The error for a pool reference where only an inline string may be.
fn pooled_string(at: u64, what: &str) -> ReadError {
    ReadError::Malformed {
        offset: at,
        expected: format!("{what}: an inline string, found a constant-pool reference"),
    }
}

/// A string value as the bytes hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawString<'a> {
    /// `null`.
    Null,
    /// UTF-8 bytes, not yet checked: invalid sequences read as U+FFFD, as
    /// the JDK reads them ([`String::from_utf8_lossy`]).
    Utf8(&'a [u8]),
    /// Any other inline encoding, decoded.
    Text(Cow<'a, str>),
    /// A key into the string pool.
    Pooled(u64),
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
    fn varints_move_the_cursor_by_their_length() {
        use jfr_format::write_varint;
        let mut data = Vec::new();
        for value in [0, 0x7f, 0x80, u64::MAX] {
            write_varint(&mut data, value);
        }
        data.extend([0x80, 0x80]);
        let mut cursor = Cursor::new(&data, 0);
        for (value, remaining) in [(0, 14), (0x7f, 13), (0x80, 11), (u64::MAX, 2)] {
            assert_eq!(cursor.varint("v").unwrap(), value);
            assert_eq!(cursor.remaining(), remaining);
        }
        // Cut short: an error at the varint's start, the cursor not moved.
        let error = cursor.varint("v").unwrap_err().to_string();
        assert!(error.contains("byte 13: expected v: a varint"), "{error}");
        assert_eq!(cursor.remaining(), 2);
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
