//! A chunk's constant pools: every checkpoint event, reached from the
//! header's newest one back through each checkpoint's delta, its entries
//! decoded as generic [`Value`]s by their pool's class.

use jfr_format::{CHECKPOINT_EVENT_ID, ChunkHeader, HEADER_SIZE};

use crate::cursor::Cursor;
use crate::metadata::Metadata;
use crate::value::{MAX_RESERVE, Value, read_value, value_budget};
use crate::{IdMap, ReadError};

/// The pooled values of one chunk, by pool class id and key.
#[derive(Debug, Default)]
pub struct Pools {
    values: IdMap<(u64, u64), Value>,
}

/// One checkpoint read: its delta to the one before, the delta's file
/// offset, and its entries, newest first.
type Checkpoint = (i64, u64, Vec<((u64, u64), Value)>);

impl Pools {
    /// The value pooled under `key` in the pool of `class_id`.
    pub fn get(&self, class_id: u64, key: u64) -> Option<&Value> {
        self.values.get(&(class_id, key))
    }

    /// Reads the pools of the chunk `bytes` (its whole size, standing at
    /// `offset` in the file), walking the checkpoints from the newest back
    /// to the oldest. The JDK keeps the oldest value of a key defined
    /// twice; so do we.
    ///
    /// Each checkpoint must end at or before the start of the newer one that
    /// points to it: checkpoints are events, written one after another, so
    /// the chain moves back through the chunk. That also bounds the walk:
    /// no byte is decoded twice, so a corrupt delta cannot loop or make the
    /// walk quadratic in the chunk size.
    pub(crate) fn read(
        bytes: &[u8],
        offset: u64,
        header: &ChunkHeader,
        metadata: &Metadata,
    ) -> Result<Self, ReadError> {
        let mut pools = Self::default();
        // `chunk_header` checked that the newest is inside the chunk.
        let mut position = header.constant_pool_offset;
        // The checkpoint at `position` must end by here.
        let mut limit = header.chunk_size;
        while position != 0 {
            let (delta, delta_offset, body) =
                read_checkpoint(bytes, offset, metadata, position, limit)?;
            for (key, value) in body {
                pools.values.insert(key, value);
            }
            if delta == 0 {
                break;
            }
            // Errors name the delta's own offset: the bytes it points to
            // may be anywhere, or past the end of the file.
            let older = position
                .checked_add_signed(delta)
                .filter(|next| (HEADER_SIZE as u64..position).contains(next))
                .ok_or_else(|| ReadError::Malformed {
                    offset: delta_offset,
                    expected: format!(
                        "a checkpoint delta back to an older checkpoint (from chunk byte \
                         {HEADER_SIZE} to before this one at chunk byte {position}), found {delta}"
                    ),
                })?;
            limit = position;
            position = older;
        }
        Ok(pools)
    }
}

/// Reads the checkpoint at chunk byte `position` of the chunk `bytes`
/// (at `offset` in the file), which must end by chunk byte `limit`.
fn read_checkpoint(
    bytes: &[u8],
    offset: u64,
    metadata: &Metadata,
    position: u64,
    limit: u64,
) -> Result<Checkpoint, ReadError> {
    let start = offset + position;
    // `position < limit <= chunk size`, so these slices are in bounds.
    let mut cursor = Cursor::new(&bytes[position as usize..limit as usize], start);
    let size = cursor.varint("a checkpoint's size")?;
    let size_len = cursor.offset() - start;
    if size <= size_len || size > limit - position {
        return Err(ReadError::Malformed {
            offset: start,
            expected: format!(
                "a checkpoint size from {} to the {} bytes before the newer checkpoint \
                 or the chunk's end, found {size}",
                size_len + 1,
                limit - position
            ),
        });
    }
    // From here the cursor sees the checkpoint's bytes only: every count
    // in it is checked against them, and no value runs past its end.
    let body = cursor.bytes((size - size_len) as usize, "a checkpoint")?;
    let mut cursor = Cursor::new(body, start + size_len);
    let type_id = cursor.varint("a checkpoint's type")?;
    if type_id != CHECKPOINT_EVENT_ID {
        return Err(ReadError::Malformed {
            offset: start,
            expected: format!("a checkpoint (type 1), found type {type_id}"),
        });
    }
    cursor.varint("a checkpoint's start time")?;
    cursor.varint("a checkpoint's duration")?;
    let delta_offset = cursor.offset();
    let delta = cursor.varint("a checkpoint's delta")? as i64;
    cursor.u8("a checkpoint's type mask")?;
    let pools = cursor.count("a checkpoint's pool count")?;
    let mut budget = value_budget(body.len());
    let mut entries = Vec::new();
    for _ in 0..pools {
        let at = cursor.offset();
        let class_id = cursor.varint("a pool's class id")?;
        let class = metadata
            .class(class_id)
            .ok_or_else(|| ReadError::Malformed {
                offset: at,
                expected: format!("a pool of a declared class, found class id {class_id}"),
            })?;
        let count = cursor.count("a pool's entry count")?;
        entries.reserve(count.min(MAX_RESERVE));
        for _ in 0..count {
            let key = cursor.varint("a pool key")?;
            let value = read_value(metadata, &mut cursor, class, 0, &mut budget)?;
            // Newest first: the oldest definition is inserted last and wins.
            entries.push(((class_id, key), value));
        }
    }
    if cursor.remaining() != 0 {
        return Err(ReadError::Malformed {
            offset: start,
            expected: format!(
                "a checkpoint of {size} bytes, but its pools take {}",
                cursor.offset() - start
            ),
        });
    }
    Ok((delta, delta_offset, entries))
}
