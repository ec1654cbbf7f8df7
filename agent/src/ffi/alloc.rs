//! The agent's allocator (libheapsampler.so's `#[global_allocator]`): the C
//! allocator for small blocks, the kernel's pages for large ones.
//!
//! A session's large buffers (the 4 MiB ring, the writer's chunk and
//! caches) live as long as the session. Through glibc's `malloc`, freeing
//! one that glibc had mapped raises glibc's mapping and trimming thresholds
//! for the whole process (to 4 MiB and 8 MiB, the JVM's own allocations
//! included), and the next session's buffers then come from, and stay in,
//! the arenas of whichever threads allocated them: the JVM's resident
//! memory grew by about 300 KiB per attach/stop cycle (BENCHMARKS.md,
//! "Attach and stop, again and again"). Mapped and unmapped here, they
//! leave glibc's state as they found it and give their memory back at once.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

/// Blocks from this size are mapped pages: glibc's default mapping threshold.
const MAP_FROM: usize = 128 << 10;

/// The agent's allocator; see the module's documentation.
pub struct Allocator;

/// Mappings start on a page, and pages are 4 KiB or larger on Linux.
const MAP_ALIGN: usize = 4096;

impl Allocator {
    fn mapped(layout: Layout) -> bool {
        layout.size() >= MAP_FROM && layout.align() <= MAP_ALIGN
    }
}

// SAFETY: large blocks are fresh anonymous mappings of at least the
// layout's size, aligned to a page (which `mapped` requires to satisfy the
// layout's alignment), unmapped only by `dealloc` with the same layout;
// small ones are the system allocator's, with its guarantees.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Self::mapped(layout) {
            // SAFETY: the caller's layout has a non-zero size.
            return unsafe { System.alloc(layout) };
        }
        // SAFETY: an anonymous private mapping has no preconditions.
        let block = unsafe {
            libc::mmap(
                ptr::null_mut(),
                layout.size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if block == libc::MAP_FAILED {
            ptr::null_mut()
        } else {
            block.cast()
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !Self::mapped(layout) {
            // SAFETY: as in `alloc`.
            return unsafe { System.alloc_zeroed(layout) };
        }
        // SAFETY: fresh anonymous pages are zeroed by the kernel.
        unsafe { self.alloc(layout) }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if !Self::mapped(layout) {
            // SAFETY: `block` came from `System.alloc` with this layout.
            return unsafe { System.dealloc(block, layout) };
        }
        // SAFETY: `block` is a mapping of `layout.size()` bytes made by
        // `alloc` with this layout, not used after this.
        unsafe {
            libc::munmap(block.cast(), layout.size());
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` is valid for the alignment.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if !Self::mapped(layout) && !Self::mapped(new_layout) {
            // SAFETY: both small: the system allocator's block and layout.
            return unsafe { System.realloc(block, layout, new_size) };
        }
        if Self::mapped(layout) && Self::mapped(new_layout) {
            // A growing table or buffer: the kernel moves its pages rather
            // than copying them.
            // SAFETY: `block` is a mapping of `layout.size()` bytes made by
            // `alloc`; the result (or the failure) replaces it.
            let moved = unsafe {
                libc::mremap(block.cast(), layout.size(), new_size, libc::MREMAP_MAYMOVE)
            };
            return if moved == libc::MAP_FAILED {
                ptr::null_mut()
            } else {
                moved.cast()
            };
        }
        // SAFETY: `new_layout` is valid (above) and non-zero (new_size > 0
        // by GlobalAlloc's contract).
        let moved = unsafe { self.alloc(new_layout) };
        if !moved.is_null() {
            // SAFETY: both blocks are valid for the smaller of the sizes and
            // distinct; the old one is freed with its own layout.
            unsafe {
                ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                self.dealloc(block, layout);
            }
        }
        moved
    }
}
