//! The hand-written side of the tracepoints: the types the generated table and payloads are
//! made of (see `tracepoints/tracepoints.toml` and [`super::tracepoints`]).

use std::sync::atomic::{AtomicBool, Ordering};

/// The spec's kinds, shared with the generator and the command.
pub use utrace_format::{Category, RangeKind, ValueKind};

#[derive(Debug)]
pub struct FieldInfo {
    pub name: &'static str,
    pub kind: ValueKind,
}

/// A tracepoint as declared in the spec.
#[derive(Debug)]
pub struct TracepointInfo {
    pub name: &'static str,
    pub kind: RangeKind,
    /// The range it delimits (a marker's own name).
    pub range: &'static str,
    /// Index into `TOGGLES`.
    pub toggle: usize,
    /// Written at the bottom of the pipe (after the work before it), else at the top.
    pub end_of_pipe: bool,
    /// Perfetto stage name (begin and marker).
    pub stage: Option<&'static str>,
    pub category: Option<Category>,
    pub fields: &'static [FieldInfo],
}

/// A `GPU_TRACEPOINTS` switch. Read with one relaxed load on the recording path.
pub struct Toggle {
    pub name: &'static str,
    pub default: bool,
    enabled: AtomicBool,
}

impl Toggle {
    pub const fn new(name: &'static str, default: bool) -> Toggle {
        Toggle {
            name,
            default,
            enabled: AtomicBool::new(default),
        }
    }

    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub fn set(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }
}

/// A label stored out of line in its command trace's string storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LabelRef {
    pub offset: u32,
    pub len: u32,
}

impl LabelRef {
    /// The label's bytes in `strings` (empty if out of range).
    pub fn bytes<'a>(&self, strings: &'a [u8]) -> &'a [u8] {
        let start = self.offset as usize;
        strings.get(start..start + self.len as usize).unwrap_or(&[])
    }
}

/// What a label argument is given: the application's bytes (copied into the trace's
/// storage, at most `max` bytes) or a label already stored there.
pub trait LabelInput {
    fn store(self, strings: &mut Vec<u8>, max: usize) -> LabelRef;
}

/// Ends a label that was cut, so a reader knows it was.
pub const CUT_MARK: &str = "…";

impl LabelInput for &[u8] {
    /// A label longer than `max` bytes is cut before the character that would cross
    /// `max - 3` (never inside a UTF-8 sequence) and ends with [`CUT_MARK`].
    fn store(self, strings: &mut Vec<u8>, max: usize) -> LabelRef {
        let offset = strings.len() as u32;
        if self.len() <= max {
            strings.extend_from_slice(self);
        } else {
            let mut end = max.saturating_sub(CUT_MARK.len());
            // Back up over continuation bytes (0b10xx_xxxx) to a character's first byte.
            while end > 0 && self[end] & 0xc0 == 0x80 {
                end -= 1;
            }
            strings.extend_from_slice(&self[..end]);
            strings.extend_from_slice(CUT_MARK.as_bytes());
        }
        LabelRef {
            offset,
            len: strings.len() as u32 - offset,
        }
    }
}

impl LabelInput for &str {
    fn store(self, strings: &mut Vec<u8>, max: usize) -> LabelRef {
        self.as_bytes().store(strings, max)
    }
}

impl LabelInput for LabelRef {
    fn store(self, _: &mut Vec<u8>, _: usize) -> LabelRef {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::{LabelInput, CUT_MARK};

    fn stored(label: &str, max: usize) -> String {
        let mut strings = b"earlier".to_vec();
        let r = label.as_bytes().store(&mut strings, max);
        assert_eq!(r.offset, 7, "appended after what was stored");
        String::from_utf8(r.bytes(&strings).to_vec()).expect("still UTF-8")
    }

    #[test]
    fn a_label_that_fits_is_kept_whole() {
        assert_eq!(stored("shadow pass", 16), "shadow pass");
        assert_eq!(stored("exactly 16 bytes", 16), "exactly 16 bytes");
    }

    #[test]
    fn a_long_label_is_cut_and_marked_within_the_limit() {
        let cut = stored("a label of more than sixteen bytes", 16);
        assert_eq!(cut, format!("a label of mo{CUT_MARK}"));
        assert!(cut.len() <= 16);
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        // 'é' is two bytes: a cut at byte 13 would fall inside the fifth one.
        let cut = stored("ééééééééééé", 16);
        assert_eq!(cut, format!("éééééé{CUT_MARK}"));
    }
}
