//! The process's allocator, and the pages it asks the kernel for.

/// mimalloc instead of glibc malloc: the request path allocates and frees many small objects
/// (tasks, events, evicted tasks); glibc's free and consolidation took a quarter of the CPU
/// time under load. Its v2 line (Cargo.toml says why) gives freed memory back 10-100 ms after
/// it was freed; see docs/src/benchmarks.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The variable with which mimalloc's own choice about huge pages is asked for.
const ALLOW_THP: &str = "MIMALLOC_ALLOW_THP";

/// Turns transparent huge pages off for this process (Linux), unless `MIMALLOC_ALLOW_THP` is
/// set: mimalloc reads that itself, and whoever set it chose.
///
/// With huge pages, the first touched byte of 2 MiB makes all of it resident. A server's
/// memory is mostly small parts, each partly used: an open HTTP/1.1 connection's two 8 KiB
/// buffers hold a few hundred bytes. mimalloc v3 asks for huge pages on its arenas; v2, the
/// line ferry is built with, does not, but a kernel whose setting is `always` gives them to
/// any large mapping unasked. Measured with v3, 10,000 open streams took 228 MiB with them and
/// 144 MiB without, at the same requests/s (see docs/src/benchmarks.md). The kernel keeps the
/// setting for the children a server starts (`--exec` agents, Chromium).
pub(crate) fn avoid_huge_pages() {
    if std::env::var_os(ALLOW_THP).is_some() {
        return;
    }
    // A kernel built without huge pages refuses the call; there is then nothing to turn off.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}
