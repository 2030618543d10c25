//! The stdin of a stdio server, written on a thread of its own.
//!
//! A server that stops reading its stdin fills the pipe, and a write to a
//! full pipe waits until the server reads: on the session's thread, that
//! wait had no end, and neither `--timeout` nor Ctrl-C could reach it. Here
//! a message is queued and the session goes on to wait for the reply, where
//! `--timeout` and Ctrl-C apply; the queue is bounded, so a server that
//! never reads cannot make elicit hold more than [`MAX_QUEUED_BYTES`].

use std::collections::VecDeque;
use std::io::Write;
use std::process::ChildStdin;
use std::sync::{Arc, Condvar, Mutex};

/// The most bytes waiting for a server to read them.
pub const MAX_QUEUED_BYTES: usize = 16 * 1024 * 1024;

#[derive(Default)]
struct State {
    queue: VecDeque<Vec<u8>>,
    /// Bytes queued or being written.
    pending: usize,
    /// No more messages: the writer closes the pipe once the queue is out.
    closing: bool,
    /// Why the pipe cannot be written any more (the server exited, say).
    failed: Option<(std::io::ErrorKind, String)>,
}

/// Why a message was not queued.
#[derive(Debug)]
pub enum Refused {
    /// Writing failed before: the error, as the writer met it.
    Failed(std::io::Error),
    /// The server has not read this many bytes elicit sent.
    NotReading { pending: usize },
    /// The pipe is closed (the session is ending).
    Closed,
}

pub(crate) struct StdinWriter {
    shared: Arc<(Mutex<State>, Condvar)>,
}

impl StdinWriter {
    pub fn start(mut stdin: ChildStdin) -> Self {
        let shared: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let theirs = shared.clone();
        std::thread::spawn(move || {
            let (lock, ready) = &*theirs;
            loop {
                let line = {
                    let mut st = lock.lock().unwrap_or_else(|p| p.into_inner());
                    loop {
                        if let Some(line) = st.queue.pop_front() {
                            break line;
                        }
                        if st.closing {
                            // Dropping the pipe is the server's end of input.
                            return;
                        }
                        st = ready.wait(st).unwrap_or_else(|p| p.into_inner());
                    }
                };
                let written = stdin.write_all(&line).and_then(|()| stdin.flush());
                let mut st = lock.lock().unwrap_or_else(|p| p.into_inner());
                st.pending = st.pending.saturating_sub(line.len());
                if let Err(e) = written {
                    st.failed = Some((e.kind(), e.to_string()));
                    st.queue.clear();
                    st.pending = 0;
                    return;
                }
            }
        });
        StdinWriter { shared }
    }

    /// Queues one message for the server.
    pub fn send(&self, line: Vec<u8>) -> Result<(), Refused> {
        let (lock, ready) = &*self.shared;
        let mut st = lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((kind, text)) = &st.failed {
            return Err(Refused::Failed(std::io::Error::new(*kind, text.clone())));
        }
        if st.closing {
            return Err(Refused::Closed);
        }
        if st.pending > 0 && st.pending + line.len() > MAX_QUEUED_BYTES {
            return Err(Refused::NotReading {
                pending: st.pending,
            });
        }
        st.pending += line.len();
        st.queue.push_back(line);
        ready.notify_all();
        Ok(())
    }

    /// Bytes sent that the server has not read yet (for tests: the session
    /// learns of them only when the bound refuses a message).
    #[cfg(test)]
    fn unread(&self) -> usize {
        self.shared
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pending
    }

    /// No more messages: the pipe closes once the queue is written (or at
    /// once, when the server is not reading and is then ended).
    pub fn close(&self) {
        let (lock, ready) = &*self.shared;
        lock.lock().unwrap_or_else(|p| p.into_inner()).closing = true;
        ready.notify_all();
    }
}

impl Drop for StdinWriter {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn piped(program: &str, args: &[&str]) -> std::process::Child {
        Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_reader_that_never_reads_is_refused_past_the_bound_without_waiting() {
        let mut child = piped("sleep", &["30"]);
        let writer = StdinWriter::start(child.stdin.take().unwrap());
        let chunk = vec![b'x'; 1024 * 1024];
        let began = Instant::now();
        let mut refused = None;
        for _ in 0..64 {
            if let Err(e) = writer.send(chunk.clone()) {
                refused = Some(e);
                break;
            }
        }
        match refused {
            Some(Refused::NotReading { pending }) => {
                assert!(pending > MAX_QUEUED_BYTES - chunk.len(), "{pending}")
            }
            other => panic!("expected NotReading, got {other:?}"),
        }
        assert!(writer.unread() > 0);
        assert!(began.elapsed() < Duration::from_secs(5), "send waited");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn a_reader_that_exited_makes_later_sends_fail_with_the_write_error() {
        let mut child = piped("true", &[]);
        let stdin = child.stdin.take().unwrap();
        child.wait().unwrap();
        let writer = StdinWriter::start(stdin);
        let deadline = Instant::now() + Duration::from_secs(10);
        let error = loop {
            match writer.send(b"{}\n".to_vec()) {
                Err(Refused::Failed(e)) => break e,
                Err(other) => panic!("expected Failed, got {other:?}"),
                Ok(()) => {
                    assert!(Instant::now() < deadline, "no write error came");
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        };
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
        writer.close();
        assert!(matches!(
            writer.send(b"{}\n".to_vec()),
            Err(Refused::Failed(_) | Refused::Closed)
        ));
    }
}
