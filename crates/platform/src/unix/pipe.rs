//! The proxy's fast path for pass-through traffic (Linux, when the input is
//! a pipe): elicit looks at every byte, but copies each only once.
//!
//! A plain relay copies every byte twice (`read` into elicit, `write` out
//! again), on top of the copies the client and server make themselves: two
//! extra hops cost about as much as two more `cat`s in the pipeline. Here
//! the bytes are *looked at* through a copy, but *moved* without one:
//!
//! 1. `tee(2)` duplicates what is waiting in the input pipe into a private
//!    scratch pipe, without consuming it (no copy: the pipe's pages are
//!    shared);
//! 2. the scratch pipe is read into memory (the one copy) and split into
//!    lines, exactly as the read path does;
//! 3. a run of whole lines the classifier does not claim is moved from the
//!    input to the output with `splice(2)` (no copy); lines elicit must look
//!    at, and the unfinished line at the end, are consumed from the input
//!    (spliced into `/dev/null`) and handed over as bytes, as before.
//!
//! The byte order, the per-line decisions and the 64 MiB streaming rule are
//! those of the relay's read path (`for_each_line_batch` in elicit-session's
//! stdio relay); only where the bytes travel differs. Anything that cannot
//! be spliced (the input is not a pipe, the output refuses splice) uses the
//! read path.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::BorrowedFd;
pub use std::os::fd::{AsRawFd, RawFd};

use rustix::io::Errno;
use rustix::pipe::SpliceFlags;

/// What happened to a run handed to the mover.
pub enum Moved {
    /// The bytes are out.
    Done,
    /// The output cannot take spliced bytes (nothing was moved): write
    /// them instead, and do not try again.
    Unsupported,
    /// Splicing failed after `moved` bytes: the rest is written (the
    /// output's own error handling decides what then), and splice is not
    /// tried again.
    Failed {
        /// Bytes moved before the failure.
        moved: usize,
    },
}

/// The descriptor numbered `fd`, for one call.
fn borrow<'a>(fd: RawFd) -> BorrowedFd<'a> {
    // SAFETY: the relay hands this module descriptor numbers, not owned
    // handles (its own stdin and stdout, and the server's pipes it holds),
    // and keeps each open for as long as it relays through it: every
    // borrow here lives for one system call within that time.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

/// Whether `fd` is a pipe (FIFO).
fn is_pipe(fd: RawFd) -> bool {
    rustix::fs::fstat(borrow(fd)).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo
    })
}

/// Bytes waiting in a pipe (0 when unknown): lets a batch skip its flush
/// when more input is already there.
pub fn pending(fd: RawFd) -> usize {
    rustix::io::ioctl_fionread(borrow(fd)).map_or(0, |n| n as usize)
}

/// Asks for a 1 MiB pipe buffer (the default is 64 KiB): with two extra
/// hops on the path, fewer context switches is most of the relay cost. A
/// descriptor that is not a pipe just refuses, harmlessly.
pub fn grow(fd: RawFd) {
    let _ = rustix::pipe::fcntl_setpipe_size(borrow(fd), 1024 * 1024);
}

/// Moves exactly `len` bytes from the pipe `from` to `to`.
pub fn splice_exact(from: RawFd, to: RawFd, len: usize) -> Moved {
    let mut moved = 0;
    while moved < len {
        match rustix::pipe::splice(
            borrow(from),
            None,
            borrow(to),
            None,
            len - moved,
            SpliceFlags::MOVE,
        ) {
            Ok(0) => return Moved::Failed { moved },
            Ok(r) => moved += r,
            Err(Errno::INTR) => continue,
            Err(Errno::AGAIN) => wait_for(to, rustix::event::PollFlags::OUT, Some(1000)),
            Err(Errno::INVAL) if moved == 0 => return Moved::Unsupported,
            Err(_) => return Moved::Failed { moved },
        }
    }
    Moved::Done
}

/// Waits (up to `millis`, or for ever) for `fd` to be ready for `flags`.
fn wait_for(fd: RawFd, flags: rustix::event::PollFlags, millis: Option<u64>) {
    let timeout = millis.map(|m| rustix::event::Timespec {
        tv_sec: (m / 1000) as _,
        tv_nsec: ((m % 1000) * 1_000_000) as _,
    });
    let fd = borrow(fd);
    let mut p = [rustix::event::PollFd::new(&fd, flags)];
    let _ = rustix::event::poll(&mut p, timeout.as_ref());
}

/// The most looked at per batch. Each batch's bytes are copied into memory
/// once and then searched several times over (line ends, a backslash, each
/// name the classifier looks for): a batch that fits the L2 cache (512 KiB
/// per core here) stays there for the copy and the searches, where a 1 MiB
/// batch (the size of the pipes) does not. Measured on 100 000 1 KiB lines
/// (bench/proxy.sh traffic, `perf stat -r 10`): 10-20 ms less system time
/// per run than 1 MiB batches, user time unchanged.
const PEEK: usize = 256 * 1024;

/// A private pipe to `tee` into, and `/dev/null` to consume bytes that were
/// already looked at.
struct Scratch {
    read: File,
    write: File,
    capacity: usize,
    null: Option<File>,
}

impl Scratch {
    fn new(like: RawFd) -> Option<Scratch> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).ok()?;
        let (read, write) = (File::from(read), File::from(write));
        let want = rustix::pipe::fcntl_getpipe_size(borrow(like))
            .unwrap_or(0)
            .clamp(64 * 1024, PEEK);
        let _ = rustix::pipe::fcntl_setpipe_size(&write, want);
        let capacity = rustix::pipe::fcntl_getpipe_size(&write).ok()?;
        if capacity == 0 {
            return None;
        }
        Some(Scratch {
            read,
            write,
            capacity: capacity.min(PEEK),
            null: std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/null")
                .ok(),
        })
    }

    /// Waits for input and duplicates up to `capacity` bytes of it into the
    /// scratch pipe. `Ok(0)`: end of input.
    fn tee(&self, input: RawFd) -> io::Result<usize> {
        loop {
            match rustix::pipe::tee(
                borrow(input),
                &self.write,
                self.capacity,
                SpliceFlags::empty(),
            ) {
                Ok(n) => return Ok(n),
                Err(Errno::INTR) => continue,
                Err(Errno::AGAIN) => wait_for(input, rustix::event::PollFlags::IN, None),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Removes `len` bytes (already seen) from the front of `input`.
    fn consume(&self, input: RawFd, len: usize, spare: &mut Vec<u8>) -> io::Result<()> {
        let mut left = len;
        if let Some(null) = &self.null {
            match splice_exact(input, null.as_raw_fd(), len) {
                Moved::Done => return Ok(()),
                Moved::Unsupported => {}
                Moved::Failed { moved } => left -= moved,
            }
        }
        spare.resize(left.min(1 << 20), 0);
        let input = borrow(input);
        while left > 0 {
            let n = left.min(spare.len());
            match rustix::io::read(input, &mut spare[..n]) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(got) => left -= got,
                Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

/// The spliced line batcher: as the relay's `for_each_line_batch` (same
/// `bulk` and `emit`), plus `move_out(input, len)` to splice a run of whole
/// lines to the output. `watch(true/false)` brackets each wait for input.
/// Returns false, having consumed nothing, when `input` cannot be used this
/// way (then the caller uses the read path).
pub fn for_each_line_batch(
    input: RawFd,
    limit: usize,
    bulk: impl Fn(&[u8]) -> bool,
    mut emit: impl FnMut(&[u8], bool, bool) -> bool,
    mut move_out: impl FnMut(RawFd, usize) -> Moved,
    watch: impl Fn(bool),
) -> bool {
    if !is_pipe(input) {
        return false;
    }
    let Some(scratch) = Scratch::new(input) else {
        return false;
    };
    let mut peek = vec![0u8; scratch.capacity];
    let mut taker = Taker {
        scratch: &scratch,
        input,
        spare: Vec::new(),
    };
    let mut held = HeldLine {
        partial: Vec::new(),
        streaming: false,
        limit,
    };
    let mut can_splice = true;
    let mut first = true;
    loop {
        watch(true);
        let teed = scratch.tee(input);
        watch(false);
        let n = match teed {
            Ok(0) => {
                if !held.partial.is_empty() {
                    emit(&held.partial, !held.streaming, true);
                }
                return true;
            }
            Ok(n) => n,
            Err(_) if first => return false,
            Err(_) => return true,
        };
        first = false;
        if (&scratch.read).read_exact(&mut peek[..n]).is_err() {
            return true;
        }
        let batch = &peek[..n];
        // What this batch leaves in the input: the unfinished last line,
        // when the batch has a newline (see below).
        let tail_left = memchr::memrchr(b'\n', batch).map_or(0, |i| n - i - 1);
        // More input already there: the batch's end need not flush (the
        // next batch will, or a splice, which flushes first).
        let more_waiting = || pending(input) > tail_left;
        let Some(mut pos) = end_held_line(&mut taker, &mut held, batch, &mut emit, &more_waiting)
        else {
            return true;
        };
        if let Some(l) = memchr::memrchr(b'\n', &batch[pos..]) {
            let whole = &batch[pos..pos + l + 1];
            let lines = WholeLines {
                bulk: &bulk,
                can_splice: &mut can_splice,
                more_waiting: &more_waiting,
            };
            if !lines.pass(&mut taker, whole, &mut emit, &mut move_out) {
                return true;
            }
            pos += l + 1;
        }
        // The start of a line that ends in a later batch. After whole
        // lines it stays in the input, to go out with the rest of its line
        // (the next `tee` sees it again); alone, it is taken (a writer may
        // be slow to finish it, and `tee` would return it again at once).
        if pos == 0 && (!taker.take(n) || !held.extend(batch, &mut emit)) {
            return true;
        }
    }
}

/// Takes bytes already looked at out of the input.
struct Taker<'a> {
    scratch: &'a Scratch,
    input: RawFd,
    spare: Vec<u8>,
}

impl Taker<'_> {
    /// Removes `len` bytes from the front of the input; false if that failed.
    fn take(&mut self, len: usize) -> bool {
        self.scratch
            .consume(self.input, len, &mut self.spare)
            .is_ok()
    }
}

/// The unfinished line so far (held up to `limit`), or, once it is over the
/// limit, `streaming`: the rest of it is passed on as it comes.
struct HeldLine {
    partial: Vec<u8>,
    streaming: bool,
    limit: usize,
}

impl HeldLine {
    fn is_held(&self) -> bool {
        !self.partial.is_empty() || self.streaming
    }

    /// See [`extend_line`].
    fn extend(&mut self, bytes: &[u8], emit: &mut impl FnMut(&[u8], bool, bool) -> bool) -> bool {
        extend_line(
            &mut self.partial,
            &mut self.streaming,
            bytes,
            self.limit,
            emit,
        )
    }

    /// Hands over the line, now ended (or the end of a streamed one), and
    /// starts afresh.
    fn finish(&mut self, flush: bool, emit: &mut impl FnMut(&[u8], bool, bool) -> bool) -> bool {
        let ok = if self.streaming {
            emit(&[], false, flush)
        } else {
            emit(&self.partial, true, flush)
        };
        if !ok {
            return false;
        }
        self.partial.clear();
        if self.partial.capacity() > 1 << 20 {
            self.partial = Vec::new();
        }
        self.streaming = false;
        true
    }
}

/// The end of a line begun in an earlier batch, taken from the front of
/// `batch`: where the batch's own lines start, or `None` to stop.
fn end_held_line(
    taker: &mut Taker<'_>,
    held: &mut HeldLine,
    batch: &[u8],
    emit: &mut impl FnMut(&[u8], bool, bool) -> bool,
    more_waiting: &dyn Fn() -> bool,
) -> Option<usize> {
    if !held.is_held() {
        return Some(0);
    }
    let end = memchr::memchr(b'\n', batch).map(|k| k + 1);
    let upto = end.unwrap_or(batch.len());
    if !taker.take(upto) || !held.extend(&batch[..upto], emit) {
        return None;
    }
    if end.is_some() {
        let flush = !batch[upto..].contains(&b'\n') && !more_waiting();
        if !held.finish(flush, emit) {
            return None;
        }
    }
    Some(upto)
}

/// A batch's run of whole lines, and how it may leave.
struct WholeLines<'a, B> {
    bulk: &'a B,
    can_splice: &'a mut bool,
    more_waiting: &'a dyn Fn() -> bool,
}

impl<B: Fn(&[u8]) -> bool> WholeLines<'_, B> {
    /// Passes `complete` (whole lines) on: spliced out when the classifier
    /// leaves it all alone and splicing works, else taken and emitted (as
    /// one piece when bulk, else line by line). False to stop.
    fn pass(
        self,
        taker: &mut Taker<'_>,
        complete: &[u8],
        emit: &mut impl FnMut(&[u8], bool, bool) -> bool,
        move_out: &mut impl FnMut(RawFd, usize) -> Moved,
    ) -> bool {
        let mut complete = complete;
        let is_bulk = (self.bulk)(complete);
        if *self.can_splice && is_bulk {
            match move_out(taker.input, complete.len()) {
                Moved::Done => return true,
                Moved::Unsupported => *self.can_splice = false,
                Moved::Failed { moved } => {
                    *self.can_splice = false;
                    complete = &complete[moved..];
                }
            }
        }
        if !taker.take(complete.len()) {
            return false;
        }
        let last_flush = !(self.more_waiting)();
        if is_bulk {
            return emit(complete, false, last_flush);
        }
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', complete) {
            let line = &complete[start..=nl];
            start = nl + 1;
            let flush = start == complete.len() && last_flush;
            if !emit(line, true, flush) {
                return false;
            }
        }
        true
    }
}

/// Adds `bytes` (no newline, or one at the end) to the line being held; a
/// line that grows over `limit` is passed on in pieces from then on.
fn extend_line(
    partial: &mut Vec<u8>,
    streaming: &mut bool,
    bytes: &[u8],
    limit: usize,
    emit: &mut impl FnMut(&[u8], bool, bool) -> bool,
) -> bool {
    if *streaming {
        return bytes.chunks(limit.max(1)).all(|c| emit(c, false, false));
    }
    let needed = partial.len() + bytes.len();
    if needed <= limit {
        if needed > partial.capacity() {
            // Small lines grow as usual; a long one gets room for the whole
            // limit at once, in memory that only becomes resident as the
            // line fills it (growing step by step would copy it, and keep
            // old and new buffers resident together).
            let want = if needed <= 1 << 20 {
                (needed * 2).min(1 << 20)
            } else {
                limit
            };
            partial.reserve_exact(want.max(needed) - partial.len());
        }
        partial.extend_from_slice(bytes);
        return true;
    }
    *streaming = true;
    let held = std::mem::take(partial);
    held.chunks(limit.max(1))
        .chain(bytes.chunks(limit.max(1)))
        .all(|c| emit(c, false, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Runs the spliced batcher over a real pipe fed in small pieces, the
    /// output a pipe too; returns (what came out, pieces handed over).
    fn run(
        input: &'static [u8],
        limit: usize,
        claim: &'static [u8],
    ) -> (Vec<u8>, Vec<(String, bool)>) {
        run_in_pieces(input, limit, claim, 5)
    }

    fn run_in_pieces(
        input: &'static [u8],
        limit: usize,
        claim: &'static [u8],
        piece: usize,
    ) -> (Vec<u8>, Vec<(String, bool)>) {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let (r, mut w) = (File::from(r), File::from(w));
        let (or, ow) = rustix::pipe::pipe().unwrap();
        let (mut or, ow) = (File::from(or), File::from(ow));
        let writer = std::thread::spawn(move || {
            for piece in input.chunks(piece) {
                w.write_all(piece).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            or.read_to_end(&mut all).unwrap();
            all
        });
        let mut pieces = Vec::new();
        let ow_fd = ow.as_raw_fd();
        let out = std::cell::RefCell::new(ow);
        let used = for_each_line_batch(
            r.as_raw_fd(),
            limit,
            |chunk| memchr::memmem::find(chunk, claim).is_none(),
            |b, single, _| {
                pieces.push((String::from_utf8_lossy(b).into_owned(), single));
                out.borrow_mut().write_all(b).unwrap();
                true
            },
            |from, len| splice_exact(from, ow_fd, len),
            |_| {},
        );
        assert!(used);
        writer.join().unwrap();
        drop(out);
        (reader.join().unwrap(), pieces)
    }

    #[test]
    fn every_byte_passes_in_order_and_claimed_lines_come_whole() {
        let input = b"ab\n{\"m\":\"CLAIM\"}\ncd\nlong-line-over-the-limit-0123456789\nef\ngh";
        let (out, pieces) = run(input, 16, b"CLAIM");
        assert_eq!(out, input.to_vec(), "byte-exact and in order");
        assert!(
            pieces.contains(&("{\"m\":\"CLAIM\"}\n".into(), true)),
            "{pieces:?}"
        );
        assert!(pieces.contains(&("gh".into(), true)), "{pieces:?}");
        for (t, single) in &pieces {
            if t.contains("0123") {
                assert!(!single, "the long line was handed over whole: {pieces:?}");
            }
            assert!(t.len() <= 16, "more than the limit held: {pieces:?}");
        }
    }

    #[test]
    fn input_larger_than_one_batch_passes_whole_and_in_order() {
        // Several batches' worth ([`PEEK`]), written faster than one batch
        // at a time, lines crossing batch ends, a claimed line in the middle.
        let mut text = Vec::new();
        for i in 0..2000 {
            if i == 1234 {
                text.extend_from_slice(b"{\"m\":\"CLAIM\"}\n");
            }
            text.extend_from_slice(
                format!("{{\"n\":{i},\"pad\":\"{}\"}}\n", "y".repeat(i % 700)).as_bytes(),
            );
        }
        assert!(text.len() > 2 * PEEK);
        let input: &'static [u8] = Box::leak(text.into_boxed_slice());
        let (out, pieces) = run_in_pieces(input, 1 << 20, b"CLAIM", 100_000);
        assert_eq!(out, input.to_vec(), "byte-exact and in order");
        assert!(
            pieces.contains(&("{\"m\":\"CLAIM\"}\n".into(), true)),
            "the claimed line was not handed over whole"
        );
    }

    #[test]
    fn a_file_is_not_a_pipe() {
        let f = tempfile::tempfile().unwrap();
        let used = for_each_line_batch(
            f.as_raw_fd(),
            16,
            |_| true,
            |_, _, _| true,
            |_, _| Moved::Done,
            |_| {},
        );
        assert!(!used);
    }
}
