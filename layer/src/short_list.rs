//! A list that lives on the stack while it holds at most `N` items (the common case on the
//! submission path, which must not allocate in the steady state) and moves to the heap
//! beyond, so that no item is ever refused.

/// Up to `N` items inline, any number beyond on the heap.
pub struct ShortList<T, const N: usize> {
    inline: [T; N],
    len: usize,
    /// Every item, once there were more than `N`.
    spilled: Vec<T>,
}

impl<T: Copy + Default, const N: usize> Default for ShortList<T, N> {
    fn default() -> Self {
        ShortList {
            inline: [T::default(); N],
            len: 0,
            spilled: Vec::new(),
        }
    }
}

impl<T: Copy + Default, const N: usize> ShortList<T, N> {
    pub fn push(&mut self, item: T) {
        if self.spilled.is_empty() {
            if let Some(slot) = self.inline.get_mut(self.len) {
                *slot = item;
                self.len += 1;
                return;
            }
            self.spilled.extend_from_slice(&self.inline[..self.len]);
        }
        self.spilled.push(item);
    }

    pub fn as_slice(&self) -> &[T] {
        if self.spilled.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spilled
        }
    }

    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_stay_in_order_inline_and_beyond() {
        let mut list: ShortList<u32, 2> = ShortList::default();
        assert!(list.is_empty());
        list.push(1);
        list.push(2);
        assert_eq!(list.as_slice(), [1, 2]);
        assert!(list.spilled.is_empty(), "two fit inline");
        list.push(3);
        list.push(4);
        assert_eq!(list.as_slice(), [1, 2, 3, 4]);
    }
}
