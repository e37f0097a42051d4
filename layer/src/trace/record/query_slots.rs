//! The queries one recording writes its timestamps to, and which of them are read back: the
//! chunks it took from the device's pool (each filled from its first query on), the slot
//! each timestamp's value lands in (queries are numbered across the chunks in order), and,
//! once a multiview timestamp was written, the queries read one by one.

use ash::vk;

use super::chunk::ChunkPool;
use crate::gpu::interface::{next_chunk_class, CopyRange, QueryRange, CHUNK_QUERIES};

/// A timestamp's place: its pool and query, and its slot in the recording's readback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub pool: vk::QueryPool,
    pub query: u32,
    pub slot: u32,
}

pub struct QuerySlots {
    /// Chunks taken, in readback order (their queries are read one chunk after the other),
    /// with the number of queries used in each; the last one's number is kept in `used`
    /// while it fills (see [`Self::settle`]).
    chunks: Vec<QueryRange>,
    /// The chunk being filled (the last of `chunks`), its size and the queries used in it:
    /// the short path of [`Self::take_one`] reads these fields, not the list. `size` is 0
    /// while there is no chunk, so that the first timestamp takes one.
    current: vk::QueryPool,
    size: u32,
    used: u32,
    /// The queries read, noted one timestamp at a time once a multiview timestamp was
    /// written (only its first view's query holds a time, and a driver need not make the
    /// others available); until then the chunks are read whole.
    copies: Vec<CopyRange>,
    noting: bool,
    /// Queries used in all chunks so far (the next timestamp's readback slot).
    slots: u32,
}

impl Default for QuerySlots {
    fn default() -> Self {
        QuerySlots {
            chunks: Vec::new(),
            current: vk::QueryPool::null(),
            size: 0,
            used: 0,
            copies: Vec::new(),
            noting: false,
            slots: 0,
        }
    }
}

#[cfg(test)]
impl QuerySlots {
    /// A current chunk with `left` queries, for tests that never reach Vulkan.
    pub fn pretend_chunk(&mut self, left: u32) {
        self.current = ash::vk::Handle::from_raw(1);
        self.size = CHUNK_QUERIES;
        self.used = CHUNK_QUERIES - left;
    }
}

impl QuerySlots {
    /// Queries left in the current chunk (none while there is none): how many one-view
    /// timestamps [`Self::take_one`] may still place.
    #[inline]
    pub fn left_in_chunk(&self) -> u32 {
        self.size - self.used
    }

    /// The next query of the current chunk for a one-view timestamp (the short path; the
    /// caller counted [`Self::left_in_chunk`], so no test here; see [`Self::take`] for the
    /// others).
    #[inline(always)]
    pub fn take_one(&mut self) -> Place {
        debug_assert!(self.used < self.size, "the caller counts the chunk's room");
        let place = Place {
            pool: self.current,
            query: self.used,
            slot: self.slots,
        };
        self.used += 1;
        self.slots += 1;
        place
    }

    /// Writes the current chunk's count into the list.
    fn settle(&mut self) {
        if let Some(last) = self.chunks.last_mut() {
            last.count = self.used;
        }
    }

    /// No chunk is being filled any more (the list was taken or given back).
    fn no_current(&mut self) {
        self.current = vk::QueryPool::null();
        self.size = 0;
        self.used = 0;
    }

    /// `views` consecutive queries in one chunk (a new one from `pool` when the current one
    /// has too few left, larger as the recording grows: see [`next_chunk_class`]); `None`
    /// when no chunk could be had.
    pub fn take(&mut self, views: u32, pool: &ChunkPool) -> Option<Place> {
        let views = views.clamp(1, CHUNK_QUERIES);
        if views > 1 && !self.noting {
            self.start_noting(pool);
        }
        if self.used + views > self.size {
            self.settle();
            if self.chunks.capacity() == 0 {
                self.chunks = pool.spare_chunks.take();
            }
            // On failure the pool reported the fault (once for the device).
            let chunk = pool.acquire(next_chunk_class(self.slots)).ok()?;
            self.chunks.push(chunk);
            self.current = chunk.pool;
            self.size = chunk.size;
            self.used = 0;
        }
        let place = Place {
            pool: self.current,
            query: self.used,
            slot: self.slots,
        };
        self.used += views;
        self.slots += views;
        Some(place)
    }

    /// Notes that the timestamp at `place` was written (only its first query is read).
    pub fn written(&mut self, place: Place) {
        if !self.noting {
            return;
        }
        if let Some(last) = self.copies.last_mut() {
            if last.pool == place.pool
                && last.first + last.count == place.query
                && last.slot + last.count == place.slot
            {
                last.count += 1;
                return;
            }
        }
        self.copies.push(CopyRange {
            pool: place.pool,
            first: place.query,
            count: 1,
            slot: place.slot,
            values: 1,
        });
    }

    /// Whether the queries read are noted one by one (the short path then does not apply).
    pub fn noting(&self) -> bool {
        self.noting
    }

    /// Every query reserved so far in a chunk was written by a timestamp of one view: the
    /// chunks are read whole, one after the other.
    fn whole_chunks(&mut self, out: &mut Vec<CopyRange>) {
        self.settle();
        let mut slot = 0;
        out.extend(self.chunks.iter().map(|c| {
            let copy = CopyRange {
                pool: c.pool,
                first: 0,
                count: c.count,
                slot,
                values: 1,
            };
            slot += c.count;
            copy
        }));
    }

    /// From the first multiview timestamp on, the queries read are noted one by one.
    fn start_noting(&mut self, pool: &ChunkPool) {
        let mut copies = pool.spare_copies.take();
        self.whole_chunks(&mut copies);
        self.copies = copies;
        self.noting = true;
    }

    /// The recording ended: its chunks, the queries read from them, and the slots used.
    pub fn finish(&mut self, pool: &ChunkPool) -> (Vec<QueryRange>, Vec<CopyRange>, u32) {
        self.settle();
        let copies = if std::mem::take(&mut self.noting) {
            std::mem::take(&mut self.copies)
        } else {
            let mut copies = pool.spare_copies.take();
            self.whole_chunks(&mut copies);
            copies
        };
        self.no_current();
        (
            std::mem::take(&mut self.chunks),
            copies,
            std::mem::replace(&mut self.slots, 0),
        )
    }

    /// Forgets a recording that was never submitted: its chunks go back as they were
    /// handed out.
    pub fn reset(&mut self, pool: &ChunkPool) {
        pool.release(&self.chunks, false);
        self.chunks.clear();
        self.no_current();
        pool.spare_copies.give(std::mem::take(&mut self.copies));
        self.noting = false;
        self.slots = 0;
    }
}
