//! The binary's allocator: a bump arena in front of the system allocator,
//! for the one thing most runs are: short.
//!
//! A scripted resolution of a form makes about a thousand small allocations
//! (a JSON tree of maps, keys and number texts, the schema model, the
//! answer) and frees them all a moment before the process ends. glibc's
//! malloc and free cost about 0.2 M instructions of that, a fifth of the
//! whole run, and returned nothing that mattered: the memory goes back when
//! the process exits. Here an allocation is a pointer bump in a fixed
//! region (zero pages in `.bss`, touched only as used), a free gives back
//! only the most recent block (which also lets a growing vector grow in
//! place), and the region never grows: past its size every
//! allocation goes to the system allocator, so a large input costs at most
//! that much more memory than before.
//!
//! Long runs (a live session, a proxy, a `--lines` stream) free and
//! allocate for as long as they run: they call
//! [`ShortRunAllocator::retire`] first, and from then on only the system
//! allocator hands out memory (blocks already in the arena stay valid;
//! freeing them does nothing).
//!
//! The binary declares it (`#[global_allocator]`, src/main.rs); the library
//! only defines it, so that its tests can drive private instances.
//!
//! Written here rather than taken from a crate: the bump allocators on
//! crates.io are either arenas a program allocates from explicitly
//! (`bumpalo`) or global allocators that never fall back or switch off,
//! and this needs both.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The binary's region size: room for a typical run many times over, and
/// the most a run can hold in the arena beyond what it would under malloc.
pub const ARENA_BYTES: usize = 4 << 20;

/// A bump arena of `N` bytes in front of [`System`]. All zero when new, so
/// a `static` of it lives in `.bss`: no bytes in the binary, and no memory
/// until a page is first touched.
#[repr(C, align(64))]
pub struct ShortRunAllocator<const N: usize> {
    /// Bytes of the region handed out so far (the next block starts here,
    /// aligned).
    used: AtomicUsize,
    /// Set by [`ShortRunAllocator::retire`]: no new blocks from the arena.
    retired: AtomicBool,
    region: UnsafeCell<[u8; N]>,
}

// SAFETY: the region's bytes are handed out in disjoint blocks (`bump`
// claims each range with a compare-and-swap on `used`), each owned by
// whoever allocated it; the region is never read or written as a whole.
unsafe impl<const N: usize> Sync for ShortRunAllocator<N> {}

impl<const N: usize> Default for ShortRunAllocator<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> ShortRunAllocator<N> {
    pub const fn new() -> Self {
        ShortRunAllocator {
            used: AtomicUsize::new(0),
            retired: AtomicBool::new(false),
            region: UnsafeCell::new([0; N]),
        }
    }

    /// From now on, allocate only from the system allocator: for runs that
    /// go on for as long as a server or a stream does, where memory that is
    /// freed must be reusable.
    pub fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    fn base(&self) -> usize {
        self.region.get() as usize
    }

    /// The block's offset in the region, when `ptr` is in it.
    fn offset_in_arena(&self, ptr: *mut u8) -> Option<usize> {
        (ptr as usize)
            .checked_sub(self.base())
            .filter(|&offset| offset < N)
    }

    /// A new block of the arena for `layout`, or None when it is retired or
    /// has no room left.
    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        if self.retired.load(Ordering::Acquire) {
            return None;
        }
        let base = self.base();
        let mut used = self.used.load(Ordering::Acquire);
        loop {
            let start = (base + used).checked_next_multiple_of(layout.align())? - base;
            let end = start.checked_add(layout.size())?;
            if end > N {
                return None;
            }
            // AcqRel: a block given back by one thread (`move_end`) and
            // handed out again to another is handed over, not raced for.
            match self
                .used
                .compare_exchange_weak(used, end, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some((base + start) as *mut u8),
                Err(now) => used = now,
            }
        }
    }

    /// Moves the end of the last block handed out from `old_end` to
    /// `new_end` (a free when `new_end` is the block's start, else a resize
    /// in place); false when that block is not the last one, or the region
    /// has no room.
    fn move_end(&self, old_end: usize, new_end: usize) -> bool {
        new_end <= N
            && self
                .used
                .compare_exchange(old_end, new_end, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }
}

// SAFETY: every block comes either from `bump` (disjoint ranges of a region
// that lives as long as the allocator, aligned as asked) or from `System`,
// and each call below tells the two apart by address before passing a block
// on.
unsafe impl<const N: usize> GlobalAlloc for ShortRunAllocator<N> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            Some(ptr) => ptr,
            None => System.alloc(layout),
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            // A block given back and handed out again is not zero.
            Some(ptr) => {
                std::ptr::write_bytes(ptr, 0, layout.size());
                ptr
            }
            None => System.alloc_zeroed(layout),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match self.offset_in_arena(ptr) {
            Some(offset) => {
                self.move_end(offset + layout.size(), offset);
            }
            None => System.dealloc(ptr, layout),
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some(offset) = self.offset_in_arena(ptr) else {
            return System.realloc(ptr, layout, new_size);
        };
        if !self.retired.load(Ordering::Acquire)
            && self.move_end(offset + layout.size(), offset + new_size)
        {
            return ptr;
        }
        if new_size <= layout.size() {
            // A block shrinks where it is (its tail is simply not used).
            return ptr;
        }
        // SAFETY (of the layout): the caller guarantees that `new_size`,
        // rounded up to the alignment, does not overflow isize.
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        let new = self.alloc(new_layout);
        if !new.is_null() {
            std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    fn in_region<const N: usize>(a: &ShortRunAllocator<N>, p: *mut u8) -> bool {
        a.offset_in_arena(p).is_some()
    }

    /// Whether the `len` bytes at `p` (a live block) all hold `byte`.
    fn holds(p: *const u8, len: usize, byte: u8) -> bool {
        unsafe { std::slice::from_raw_parts(p, len) }
            .iter()
            .all(|&b| b == byte)
    }

    #[test]
    fn blocks_are_aligned_disjoint_and_hold_their_bytes() {
        let a = Box::new(ShortRunAllocator::<4096>::new());
        let mut blocks = Vec::new();
        for (i, (size, align)) in [(1, 1), (3, 8), (16, 16), (7, 2), (64, 64), (5, 4)]
            .into_iter()
            .enumerate()
        {
            let l = layout(size, align);
            let p = unsafe { a.alloc(l) };
            assert!(in_region(&a, p));
            assert_eq!(p as usize % align, 0, "{size} bytes aligned to {align}");
            unsafe { std::ptr::write_bytes(p, i as u8 + 1, size) };
            blocks.push((p, l, i as u8 + 1));
        }
        for (p, l, fill) in &blocks {
            assert!(holds(*p, l.size(), *fill), "block overwritten");
        }
        for w in blocks.windows(2) {
            assert!(w[0].0 as usize + w[0].1.size() <= w[1].0 as usize);
        }
    }

    #[test]
    fn the_last_block_is_given_back_and_grows_in_place() {
        let a = Box::new(ShortRunAllocator::<4096>::new());
        let l = layout(100, 8);
        let p = unsafe { a.alloc(l) };
        unsafe { a.dealloc(p, l) };
        assert_eq!(unsafe { a.alloc(l) }, p, "a freed last block is reused");
        let grown = unsafe { a.realloc(p, l, 1000) };
        assert_eq!(grown, p, "the last block grows in place");
        let other = unsafe { a.alloc(layout(10, 1)) };
        assert!(other as usize >= p as usize + 1000);
    }

    #[test]
    fn a_block_that_is_not_last_moves_with_its_bytes() {
        let a = Box::new(ShortRunAllocator::<4096>::new());
        let l = layout(32, 8);
        let p = unsafe { a.alloc(l) };
        unsafe {
            std::ptr::copy_nonoverlapping(b"0123456789abcdef0123456789abcdef".as_ptr(), p, 32)
        };
        let _after = unsafe { a.alloc(layout(8, 8)) };
        assert_eq!(unsafe { a.realloc(p, l, 16) }, p, "shrinks in place");
        let q = unsafe { a.realloc(p, layout(16, 8), 64) };
        assert_ne!(q, p);
        assert!(in_region(&a, q));
        let bytes = unsafe { std::slice::from_raw_parts(q, 16) };
        assert_eq!(bytes, b"0123456789abcdef");
    }

    #[test]
    fn a_full_or_retired_arena_falls_back_to_the_system_allocator() {
        let a = Box::new(ShortRunAllocator::<256>::new());
        let small = unsafe { a.alloc(layout(200, 8)) };
        assert!(in_region(&a, small));
        let big = unsafe { a.alloc(layout(100, 8)) };
        assert!(!in_region(&a, big), "past the region: the system's");
        // A block in the region that must grow past it moves out, bytes kept.
        unsafe { std::ptr::write_bytes(small, 7, 200) };
        let moved = unsafe { a.realloc(small, layout(200, 8), 300) };
        assert!(!in_region(&a, moved));
        assert!(holds(moved, 200, 7));
        unsafe {
            a.dealloc(moved, layout(300, 8));
            a.dealloc(big, layout(100, 8));
        }
        let b = Box::new(ShortRunAllocator::<4096>::new());
        b.retire();
        let p = unsafe { b.alloc(layout(8, 8)) };
        assert!(!in_region(&b, p), "a retired arena hands out nothing");
        let z = unsafe { b.alloc_zeroed(layout(64, 8)) };
        assert!(holds(z, 64, 0));
        unsafe {
            b.dealloc(p, layout(8, 8));
            b.dealloc(z, layout(64, 8));
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_even_where_a_block_was_given_back() {
        let a = Box::new(ShortRunAllocator::<4096>::new());
        let l = layout(64, 8);
        let p = unsafe { a.alloc(l) };
        unsafe { std::ptr::write_bytes(p, 0xff, 64) };
        unsafe { a.dealloc(p, l) };
        let z = unsafe { a.alloc_zeroed(l) };
        assert_eq!(z, p);
        assert!(holds(z, 64, 0));
    }

    #[test]
    fn threads_get_disjoint_blocks() {
        let a: &'static ShortRunAllocator<{ 1 << 16 }> =
            Box::leak(Box::new(ShortRunAllocator::new()));
        let handles: Vec<_> = (0..4u8)
            .map(|t| {
                std::thread::spawn(move || {
                    let mut mine = Vec::new();
                    for _ in 0..200 {
                        let p = unsafe { a.alloc(layout(16, 8)) };
                        unsafe { std::ptr::write_bytes(p, t, 16) };
                        mine.push(p as usize);
                    }
                    mine
                })
            })
            .collect();
        let mut all: Vec<usize> = Vec::new();
        for (t, h) in handles.into_iter().enumerate() {
            let mine = h.join().unwrap();
            for &p in &mine {
                assert!(holds(p as *const u8, 16, t as u8), "a block was shared");
            }
            all.extend(mine);
        }
        all.sort_unstable();
        assert!(all.windows(2).all(|w| w[1] - w[0] >= 16));
    }
}
