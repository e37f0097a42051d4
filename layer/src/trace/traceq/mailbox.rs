//! The channel from the submitting threads to a device's traceq thread: a queue that keeps
//! its storage, so that sending allocates nothing once it has held as many messages as it
//! ever holds at once. (crossbeam's unbounded channel, used before, allocates a block per
//! 31 messages, so every 31st submission allocated; a bounded one would reserve room for
//! the whole cap of pending batches up front.) One lock, taken for a push or a pop; a send
//! wakes the thread only when it waits.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

struct State<T> {
    queue: VecDeque<T>,
    sender_gone: bool,
    receiver_gone: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
}

/// The sending side (one per device).
pub struct Outbox<T>(Arc<Shared<T>>);

/// The receiving side (the traceq thread).
pub struct Inbox<T>(Arc<Shared<T>>);

pub fn mailbox<T>() -> (Outbox<T>, Inbox<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            sender_gone: false,
            receiver_gone: false,
        }),
        ready: Condvar::new(),
    });
    (Outbox(Arc::clone(&shared)), Inbox(shared))
}

impl<T> Outbox<T> {
    /// Queues `msg`; gives it back when the receiver is gone.
    pub fn send(&self, msg: T) -> Result<(), T> {
        let mut state = self.0.state.lock();
        if state.receiver_gone {
            return Err(msg);
        }
        state.queue.push_back(msg);
        drop(state);
        self.0.ready.notify_one();
        Ok(())
    }
}

impl<T> Drop for Outbox<T> {
    fn drop(&mut self) {
        self.0.state.lock().sender_gone = true;
        self.0.ready.notify_all();
    }
}

impl<T> Inbox<T> {
    /// The next message, waiting for one; `None` once the sender is gone and everything it
    /// sent was received.
    pub fn recv(&self) -> Option<T> {
        let mut state = self.0.state.lock();
        loop {
            if let Some(msg) = state.queue.pop_front() {
                return Some(msg);
            }
            if state.sender_gone {
                return None;
            }
            self.0.ready.wait(&mut state);
        }
    }

    /// The next message if there is one.
    pub fn try_recv(&self) -> Option<T> {
        self.0.state.lock().queue.pop_front()
    }
}

impl<T> Drop for Inbox<T> {
    fn drop(&mut self) {
        // Messages nobody will receive are dropped here, outside the lock (a batch's drop
        // gives its resources back).
        let left = {
            let mut state = self.0.state.lock();
            state.receiver_gone = true;
            std::mem::take(&mut state.queue)
        };
        drop(left);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_arrive_in_order_and_the_end_is_seen_after_the_last() {
        let (tx, rx) = mailbox();
        for i in 0..5 {
            tx.send(i).unwrap();
        }
        assert_eq!(rx.try_recv(), Some(0));
        drop(tx);
        let rest: Vec<i32> = std::iter::from_fn(|| rx.recv()).collect();
        assert_eq!(rest, [1, 2, 3, 4]);
        assert_eq!(rx.recv(), None, "the sender is gone");
    }

    #[test]
    fn a_waiting_receiver_is_woken_and_a_gone_one_refuses() {
        let (tx, rx) = mailbox();
        let receiver = std::thread::spawn(move || rx.recv());
        std::thread::sleep(std::time::Duration::from_millis(20));
        tx.send(7).unwrap();
        assert_eq!(receiver.join().unwrap(), Some(7));
        // The receiver was dropped with its thread.
        assert_eq!(tx.send(8), Err(8));
    }

    #[test]
    fn the_storage_is_kept() {
        let (tx, rx) = mailbox();
        for _ in 0..3 {
            for i in 0..100 {
                tx.send(i).unwrap();
            }
            while rx.try_recv().is_some() {}
        }
        let capacity = rx.0.state.lock().queue.capacity();
        for i in 0..100 {
            tx.send(i).unwrap();
        }
        assert_eq!(rx.0.state.lock().queue.capacity(), capacity);
    }
}
