//! The layer's state of a command buffer (or a queue), found from its handle without a lock
//! or a thread-local: an open-addressing table of (handle, pointer) that readers probe with
//! atomic loads while one writer at a time (under the owner's lock) inserts, removes and
//! grows it.
//!
//! Why not a thread-local cache: in a shared library every thread-local access is a call to
//! `__tls_get_addr`, about 5% of a traced `vkCmdDraw` on Lavapipe (measured by a throwaway
//! build that skipped it). Why not a locked map: every recording and submitting thread
//! would take the same lock, and hash with SipHash.
//!
//! Why readers need no lock: Vulkan requires the application to synchronise a command
//! buffer's allocation and free with every use of it (and a queue's submissions with each
//! other), so a reader looking up a handle never races with the insertion or removal of
//! that handle itself, only with other handles'. A slot's pointer is written before its key
//! (release), and read after it (acquire); a removed key
//! becomes a tombstone that probes walk past, or an empty slot where no key can lie beyond
//! it (so that allocation churn does not fill the table); an insertion takes the first
//! tombstone or empty slot on its probe path. The table only grows
//! (when a quarter of it is live): a grown table is published whole (release) and the old
//! one is kept until the index is dropped, so a reader still probing it reads valid memory
//! and finds any handle it could be asked for; the tables together take at most twice the
//! last one's room.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use parking_lot::Mutex;

/// A slot never used.
const EMPTY: u64 = 0;
/// A slot whose handle was removed.
const TOMBSTONE: u64 = u64::MAX;
/// Slots of the first table.
const FIRST_CAPACITY: usize = 64;

struct Slot<T> {
    key: AtomicU64,
    value: AtomicPtr<T>,
}

struct Table<T> {
    slots: Box<[Slot<T>]>,
}

impl<T> Table<T> {
    fn new(capacity: usize) -> Table<T> {
        Table {
            slots: (0..capacity)
                .map(|_| Slot {
                    key: AtomicU64::new(EMPTY),
                    value: AtomicPtr::new(std::ptr::null_mut()),
                })
                .collect(),
        }
    }

    /// The positions of the slots `key` probes, in order (linear probing).
    #[inline(always)]
    fn probe_positions(&self, key: u64) -> impl Iterator<Item = usize> {
        let mask = self.slots.len() - 1;
        // Fibonacci hashing: handles are pointers or small counters, their low bits poor.
        let start = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
        (0..self.slots.len()).map(move |i| (start + i) & mask)
    }

    /// The slots `key` probes, in order.
    #[inline(always)]
    fn probe(&self, key: u64) -> impl Iterator<Item = &Slot<T>> {
        self.probe_positions(key).map(|i| &self.slots[i])
    }
}

/// What the writer keeps: the live entries, to know when to grow, and every table made so
/// far (the current one last).
struct Writer<T> {
    live: usize,
    /// Boxed: readers hold pointers to the tables themselves, which must not move when the
    /// list grows.
    #[allow(clippy::vec_box)]
    tables: Vec<Box<Table<T>>>,
}

/// Handles (non-zero, not `u64::MAX`) to pointers the owner keeps alive while they are in
/// the index.
pub struct HandleIndex<T> {
    current: AtomicPtr<Table<T>>,
    writer: Mutex<Writer<T>>,
}

// SAFETY: the index holds pointers, never the values; the owner guarantees they are valid to
// share (the cells are `Sync`).
unsafe impl<T: Sync> Sync for HandleIndex<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Send for HandleIndex<T> {}

impl<T> Default for HandleIndex<T> {
    fn default() -> Self {
        let mut first = Box::new(Table::new(FIRST_CAPACITY));
        let current = AtomicPtr::new(&mut *first as *mut Table<T>);
        HandleIndex {
            current,
            writer: Mutex::new(Writer {
                live: 0,
                tables: vec![first],
            }),
        }
    }
}

impl<T> HandleIndex<T> {
    /// The pointer stored for `key`, if any.
    ///
    /// Correct for a `key` whose insertion happened before this call and whose removal
    /// does not overlap it (see the module's documentation).
    #[inline]
    pub fn get(&self, key: u64) -> Option<*const T> {
        // SAFETY: tables are only freed when the index is dropped.
        let table = unsafe { &*self.current.load(Ordering::Acquire) };
        for slot in table.probe(key) {
            match slot.key.load(Ordering::Acquire) {
                k if k == key => return Some(slot.value.load(Ordering::Relaxed).cast_const()),
                EMPTY => return None,
                _ => {}
            }
        }
        None
    }

    /// Stores `value` for `key` (replacing what it had).
    pub fn insert(&self, key: u64, value: *const T) {
        debug_assert!(key != EMPTY && key != TOMBSTONE);
        let mut w = self.writer.lock();
        // No key twice: a re-inserted one goes where its probe path first has room.
        self.remove_locked(&mut w, key);
        if (w.live + 1) * 4 > self.table(&w).slots.len() {
            self.grow(&mut w);
        }
        let table = self.table(&w);
        for slot in table.probe(key) {
            let k = slot.key.load(Ordering::Relaxed);
            if k == EMPTY || k == TOMBSTONE {
                slot.value.store(value.cast_mut(), Ordering::Relaxed);
                slot.key.store(key, Ordering::Release);
                w.live += 1;
                return;
            }
        }
        unreachable!("a table grows before a quarter of it is live");
    }

    /// Forgets `key`; whether it was there.
    pub fn remove(&self, key: u64) -> bool {
        let mut w = self.writer.lock();
        self.remove_locked(&mut w, key)
    }

    /// Forgets every key.
    pub fn clear(&self) {
        let mut w = self.writer.lock();
        let fresh = Box::new(Table::new(FIRST_CAPACITY));
        self.publish(&mut w, fresh);
        w.live = 0;
    }

    fn remove_locked(&self, w: &mut Writer<T>, key: u64) -> bool {
        let table = self.table(w);
        let mask = table.slots.len() - 1;
        let Some(at) = table
            .probe_positions(key)
            .take_while(|&i| table.slots[i].key.load(Ordering::Relaxed) != EMPTY)
            .find(|&i| table.slots[i].key.load(Ordering::Relaxed) == key)
        else {
            return false;
        };
        w.live -= 1;
        if table.slots[(at + 1) & mask].key.load(Ordering::Relaxed) != EMPTY {
            // A key further on may have probed past this slot: it must stay non-empty.
            table.slots[at].key.store(TOMBSTONE, Ordering::Release);
            return true;
        }
        // Nothing probes past an empty slot, so none past this one or the tombstones right
        // before it: they all become empty, and churn leaves no tombstones behind.
        let mut i = at;
        loop {
            table.slots[i].key.store(EMPTY, Ordering::Release);
            i = (i + mask) & mask;
            if table.slots[i].key.load(Ordering::Relaxed) != TOMBSTONE {
                return true;
            }
        }
    }

    /// The current table, for the writer (who holds the lock: it is the last of
    /// `Writer::tables`, alive as long as the index).
    fn table(&self, _w: &Writer<T>) -> &Table<T> {
        // SAFETY: tables are only freed when the index is dropped.
        unsafe { &*self.current.load(Ordering::Relaxed) }
    }

    /// A table twice the size, holding the live entries (and no tombstones).
    fn grow(&self, w: &mut Writer<T>) {
        let old = self.table(w);
        let fresh = Box::new(Table::new(old.slots.len() * 2));
        for slot in old.slots.iter() {
            let key = slot.key.load(Ordering::Relaxed);
            if key != EMPTY && key != TOMBSTONE {
                let value = slot.value.load(Ordering::Relaxed);
                let free = fresh
                    .probe(key)
                    .find(|s| s.key.load(Ordering::Relaxed) == EMPTY)
                    .expect("the new table has room");
                free.value.store(value, Ordering::Relaxed);
                free.key.store(key, Ordering::Relaxed);
            }
        }
        self.publish(w, fresh);
    }

    /// Makes `table` the one readers probe; the old ones stay until the index goes.
    fn publish(&self, w: &mut Writer<T>, mut table: Box<Table<T>>) {
        self.current
            .store(&mut *table as *mut Table<T>, Ordering::Release);
        w.tables.push(table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr(n: usize) -> *const u32 {
        n as *const u32
    }

    #[test]
    fn keys_are_found_until_removed_and_again_after_reinsertion() {
        let index = HandleIndex::<u32>::default();
        assert_eq!(index.get(0x1000), None);
        index.insert(0x1000, ptr(8));
        index.insert(0x2000, ptr(16));
        assert_eq!(index.get(0x1000), Some(ptr(8)));
        assert!(index.remove(0x1000));
        assert!(!index.remove(0x1000));
        assert_eq!(index.get(0x1000), None);
        assert_eq!(index.get(0x2000), Some(ptr(16)), "past the tombstone");
        index.insert(0x1000, ptr(24));
        assert_eq!(index.get(0x1000), Some(ptr(24)));
        index.clear();
        assert_eq!(index.get(0x2000), None);
    }

    #[test]
    fn many_keys_grow_the_table_and_churn_does_not() {
        let index = HandleIndex::<u32>::default();
        for k in 1..=5000u64 {
            index.insert(k * 8, ptr(k as usize * 4));
        }
        for k in 1..=5000u64 {
            assert_eq!(index.get(k * 8), Some(ptr(k as usize * 4)));
        }
        let (tables, size) = {
            let w = index.writer.lock();
            (w.tables.len(), index.table(&w).slots.len())
        };
        assert_eq!(size, 32768, "grown while a quarter or more was live");
        // Allocated and freed over and over (a pool's command buffers): tombstones are
        // taken again, the table does not grow, and every key is still found.
        for round in 0..100_000u64 {
            let key = 1_000_000 + round * 8;
            index.insert(key, ptr(4));
            assert_eq!(index.get(key), Some(ptr(4)));
            assert!(index.remove(key));
        }
        for k in 1..=5000u64 {
            assert_eq!(index.get(k * 8), Some(ptr(k as usize * 4)));
        }
        let w = index.writer.lock();
        assert_eq!(w.live, 5000);
        assert_eq!(
            (w.tables.len(), index.table(&w).slots.len()),
            (tables, size)
        );
    }

    #[test]
    fn readers_on_other_threads_find_their_keys_while_others_change() {
        let index = std::sync::Arc::new(HandleIndex::<u32>::default());
        for k in 1..=8u64 {
            index.insert(k, ptr(k as usize * 4));
        }
        let readers: Vec<_> = (1..=8u64)
            .map(|k| {
                let index = std::sync::Arc::clone(&index);
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        assert_eq!(index.get(k), Some(ptr(k as usize * 4)));
                    }
                })
            })
            .collect();
        // Meanwhile other handles come and go, regrowing the table.
        for k in 100..3000u64 {
            index.insert(k, ptr(4));
            if k % 3 == 0 {
                index.remove(k);
            }
        }
        for r in readers {
            r.join().unwrap();
        }
    }
}
