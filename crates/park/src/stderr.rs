//! What the call says on stderr while parked, kept by the holder with a
//! bound: its stderr is a pipe (its stdin's other end, given by
//! `call --park`), which a thread reads into memory up to [`KEPT`] bytes
//! between two handovers, saying how much more it left out. So a server
//! that writes without end while its question waits costs a fixed amount.

use std::io::{Read, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The most of the call's stderr kept between two handovers.
pub const KEPT: usize = 256 << 10;
/// What the holder writes on its own stderr to know that everything said
/// before it has been read (NUL bytes: nothing elicit prints has them).
const MARK: &[u8] = b"\0elicit-park-handover\0\n";
/// How long a handover waits for its mark to come through.
const MARK_WAIT: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Kept {
    text: Vec<u8>,
    left_out: u64,
    marks_seen: u64,
}

/// The holder's stderr, read on a thread of its own.
pub(crate) struct Captured {
    kept: Arc<(Mutex<Kept>, Condvar)>,
    marks_sent: u64,
}

fn lock(kept: &Mutex<Kept>) -> MutexGuard<'_, Kept> {
    kept.lock().unwrap_or_else(|e| e.into_inner())
}

impl Captured {
    /// Reads `pipe` (the holder's stdin, the other end of its stderr) until
    /// it closes.
    pub(crate) fn start(mut pipe: impl Read + Send + 'static) -> Captured {
        let kept = Arc::new((Mutex::new(Kept::default()), Condvar::new()));
        let reading = Arc::clone(&kept);
        std::thread::spawn(move || {
            let mut chunk = vec![0u8; 64 << 10];
            let mut window = Vec::new();
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                window.extend_from_slice(&chunk[..n]);
                window = take_in(&reading, window);
            }
            let (kept, _) = &*reading;
            keep(&mut lock(kept), &window);
        });
        Captured {
            kept,
            marks_sent: 0,
        }
    }

    /// What was said since the last handover (everything written on stderr
    /// before this call), with a line saying what was left out.
    pub(crate) fn take(&mut self) -> String {
        let mut err = std::io::stderr().lock();
        if err.write_all(MARK).and_then(|()| err.flush()).is_ok() {
            self.marks_sent += 1;
        }
        drop(err);
        let (kept, came) = &*self.kept;
        let kept = lock(kept);
        let (mut kept, _) = came
            .wait_timeout_while(kept, MARK_WAIT, |k| k.marks_seen < self.marks_sent)
            .unwrap_or_else(|e| e.into_inner());
        let mut text = String::from_utf8_lossy(&std::mem::take(&mut kept.text)).into_owned();
        if kept.left_out > 0 {
            text.push_str(&format!(
                "elicit: {} more bytes of the call's stderr were left out (it keeps {} KiB while parked)\n",
                kept.left_out,
                KEPT >> 10
            ));
            kept.left_out = 0;
        }
        text
    }
}

/// Keeps what `window` holds up to each mark (counting the marks), and
/// gives back what could still be the start of one.
fn take_in(kept: &(Mutex<Kept>, Condvar), mut window: Vec<u8>) -> Vec<u8> {
    let (kept, came) = kept;
    let mut kept = lock(kept);
    while let Some(at) = window.windows(MARK.len()).position(|w| w == MARK) {
        keep(&mut kept, &window[..at]);
        window.drain(..at + MARK.len());
        kept.marks_seen += 1;
        came.notify_all();
    }
    let sure = window.len().saturating_sub(MARK.len() - 1);
    keep(&mut kept, &window[..sure]);
    window.drain(..sure);
    window
}

fn keep(kept: &mut Kept, bytes: &[u8]) {
    let room = KEPT.saturating_sub(kept.text.len()).min(bytes.len());
    kept.text.extend_from_slice(&bytes[..room]);
    kept.left_out += (bytes.len() - room) as u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_kept_up_to_the_bound_and_marks_split_across_reads_are_found() {
        let kept = (Mutex::new(Kept::default()), Condvar::new());
        let mut bytes = b"hello ".to_vec();
        bytes.extend_from_slice(MARK);
        bytes.extend(std::iter::repeat_n(b'x', KEPT * 2));
        let mut window = Vec::new();
        for piece in bytes.chunks(5) {
            window.extend_from_slice(piece);
            window = take_in(&kept, window);
        }
        let kept = lock(&kept.0);
        assert_eq!(kept.marks_seen, 1);
        assert_eq!(kept.text.len(), KEPT);
        assert!(kept.text.starts_with(b"hello x"));
        assert!(kept.left_out + window.len() as u64 >= (KEPT + 6) as u64);
    }
}
