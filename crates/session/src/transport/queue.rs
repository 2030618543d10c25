//! The bounded queue between a transport's reader threads and the session
//! thread.
//!
//! A reader thread that finds the queue full waits before it reads any
//! more: the socket or pipe it reads from fills up in turn, and the server
//! is held back by the operating system (backpressure), however fast it
//! writes and however long the session thread is busy (a person at a
//! prompt, a blocked reply). Without the bound, a server writing while
//! elicit waited grew elicit by gigabytes.
//!
//! Bounded by both the number of items and their total weight (about the
//! memory a message takes parsed: its text and its values, see
//! [`super::message_limits::parse_weighed`]): many small messages and a
//! few large ones are held back alike. One item larger than the byte budget still passes, when
//! the queue is empty, so no message is refused for its size alone (that is
//! the readers' message cap).
//!
//! Why not `std::sync::mpsc::sync_channel`: it bounds the count only, so a
//! few messages near the 64 MiB cap would still make a gigabyte.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// At most this many items wait in a transport's queue.
pub(crate) const MAX_QUEUED_ITEMS: usize = 256;
/// At most this much weight (about the bytes the parsed messages take)
/// waits in a transport's queue, beyond one item heavier than it.
pub const MAX_QUEUED_BYTES: usize = 32 * 1024 * 1024;

struct State<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    senders: usize,
    receiver_gone: bool,
}

struct Inner<T> {
    state: Mutex<State<T>>,
    /// Signalled when an item arrives or the last sender goes.
    not_empty: Condvar,
    /// Signalled when an item leaves or the receiver goes.
    not_full: Condvar,
    max_items: usize,
    max_bytes: usize,
}

/// The sending side (one per reader thread; clone it).
pub struct QueueSender<T> {
    inner: Arc<Inner<T>>,
}

/// The receiving side (the session thread).
pub struct QueueReceiver<T> {
    inner: Arc<Inner<T>>,
}

/// Why [`QueueReceiver::recv_timeout`] returned nothing.
#[derive(Debug, PartialEq, Eq)]
pub enum QueueEmpty {
    /// Nothing came within the wait.
    Timeout,
    /// Every sender is gone and nothing is left.
    Disconnected,
}

/// A queue with the transports' bounds.
pub fn bounded<T>() -> (QueueSender<T>, QueueReceiver<T>) {
    with_limits(MAX_QUEUED_ITEMS, MAX_QUEUED_BYTES)
}

/// A queue holding at most `max_items` items and `max_bytes` bytes.
pub(crate) fn with_limits<T>(
    max_items: usize,
    max_bytes: usize,
) -> (QueueSender<T>, QueueReceiver<T>) {
    let inner = Arc::new(Inner {
        state: Mutex::new(State {
            items: VecDeque::new(),
            bytes: 0,
            senders: 1,
            receiver_gone: false,
        }),
        not_empty: Condvar::new(),
        not_full: Condvar::new(),
        max_items: max_items.max(1),
        max_bytes,
    });
    (
        QueueSender {
            inner: inner.clone(),
        },
        QueueReceiver { inner },
    )
}

impl<T> QueueSender<T> {
    /// Queues `item`, whose size is `bytes`, waiting while the queue is
    /// full. Gives the item back when the receiver is gone.
    pub fn send(&self, item: T, bytes: usize) -> Result<(), T> {
        let inner = &*self.inner;
        let mut st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if st.receiver_gone {
                return Err(item);
            }
            let full = st.items.len() >= inner.max_items
                || (!st.items.is_empty() && st.bytes.saturating_add(bytes) > inner.max_bytes);
            if !full {
                break;
            }
            st = inner.not_full.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.bytes += bytes;
        st.items.push_back((item, bytes));
        inner.not_empty.notify_one();
        Ok(())
    }
}

impl<T> QueueSender<T> {
    /// Queues `item` without waiting, and only when the queue is empty:
    /// for a wake-up token (the receiver returns at once anyway when
    /// anything is queued), so it never waits and never adds to a backlog.
    pub(crate) fn send_if_empty(&self, item: T) {
        let mut st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.receiver_gone || !st.items.is_empty() {
            return;
        }
        st.items.push_back((item, 0));
        self.inner.not_empty.notify_one();
    }
}

impl<T> Clone for QueueSender<T> {
    fn clone(&self) -> Self {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .senders += 1;
        QueueSender {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Drop for QueueSender<T> {
    fn drop(&mut self) {
        let mut st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        st.senders -= 1;
        if st.senders == 0 {
            self.inner.not_empty.notify_all();
        }
    }
}

impl<T> QueueReceiver<T> {
    /// The next item, waiting up to `timeout` for one.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, QueueEmpty> {
        let inner = &*self.inner;
        let deadline = Instant::now() + timeout;
        let mut st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some((item, bytes)) = st.items.pop_front() {
                st.bytes -= bytes;
                inner.not_full.notify_all();
                return Ok(item);
            }
            if st.senders == 0 {
                return Err(QueueEmpty::Disconnected);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(QueueEmpty::Timeout);
            }
            st = inner
                .not_empty
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl<T> Drop for QueueReceiver<T> {
    /// Wakes every waiting sender: they get their item back and end.
    fn drop(&mut self) {
        let mut st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        st.receiver_gone = true;
        st.items.clear();
        st.bytes = 0;
        self.inner.not_full.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_full_queue_holds_the_sender_back_until_an_item_is_taken() {
        let (tx, rx) = with_limits::<u32>(2, 1000);
        let sent = Arc::new(AtomicUsize::new(0));
        let counter = sent.clone();
        let writer = std::thread::spawn(move || {
            for i in 0..5 {
                tx.send(i, 1).unwrap();
                counter.fetch_add(1, Ordering::SeqCst);
            }
        });
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(sent.load(Ordering::SeqCst), 2, "two fit, the third waits");
        for want in 0..5 {
            assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(want));
        }
        writer.join().unwrap();
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(10)),
            Err(QueueEmpty::Disconnected)
        );
    }

    #[test]
    fn the_byte_budget_bounds_large_items_but_one_always_passes() {
        let (tx, rx) = with_limits::<&str>(100, 10);
        tx.send("big", 50).unwrap(); // alone, over the budget: passes
        let tx2 = tx.clone();
        let waiting = std::thread::spawn(move || tx2.send("next", 1));
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !waiting.is_finished(),
            "the budget is spent: the next waits"
        );
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok("big"));
        assert_eq!(waiting.join().unwrap(), Ok(()));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok("next"));
    }

    #[test]
    fn a_sender_waiting_on_a_full_queue_ends_when_the_receiver_goes() {
        let (tx, rx) = with_limits::<u32>(1, 1000);
        tx.send(1, 1).unwrap();
        let waiting = std::thread::spawn(move || tx.send(2, 1));
        std::thread::sleep(Duration::from_millis(50));
        drop(rx);
        assert_eq!(waiting.join().unwrap(), Err(2));
    }

    #[test]
    fn a_wake_up_never_waits_and_never_piles_up() {
        let (tx, rx) = with_limits::<u32>(1, 1000);
        tx.send_if_empty(7);
        tx.send_if_empty(8); // not empty: dropped, not waited on
        assert_eq!(rx.recv_timeout(Duration::from_secs(1)), Ok(7));
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(20)),
            Err(QueueEmpty::Timeout)
        );
    }

    #[test]
    fn an_empty_queue_times_out() {
        let (_tx, rx) = with_limits::<u32>(1, 1);
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(20)),
            Err(QueueEmpty::Timeout)
        );
    }
}
