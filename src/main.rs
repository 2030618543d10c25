//! The `elicit` binary: parses flags and dispatches to one module per
//! subcommand ([`commands`]), which call the library and map errors to exit
//! statuses. Everything else lives in the library.
//!
//! The entry point is C's `main`, not Rust's (`no_main`): std's start-up asks
//! glibc for the main thread's stack bounds (to place a stack-overflow guard),
//! which reads and `sscanf`s all of `/proc/self/maps`: 0.1 M instructions,
//! about an eighth of a whole scripted resolution and more than any flag
//! parsing. elicit keeps the two things std's start-up does that it relies on
//! ([`startup`]); a stack overflow is then a plain SIGSEGV instead of a
//! message, which the nesting limits on input already rule out.
#![no_main]

use std::io::Write;

use clap::{CommandFactory, FromArgMatches};
use elicit::allocator::{ShortRunAllocator, ARENA_BYTES};

mod cli;
mod commands;

/// A bump arena in front of the system allocator (see
/// [`elicit::allocator`]): a short run's allocations are pointer bumps, its
/// frees nearly nothing. Long runs (`call`, `proxy`, `--lines`) retire it
/// first. (Not mimalloc, used before: it reserved a 1 GiB arena and
/// committed it eagerly with transparent huge pages on its first
/// allocation, about 1 ms of kernel time, more than a whole scripted run.)
#[global_allocator]
pub static ALLOC: ShortRunAllocator<ARENA_BYTES> = ShortRunAllocator::new();

use cli::{Cli, Command};

/// What std's own start-up does that elicit relies on, done by hand because
/// the binary starts at C's `main`.
mod startup {
    /// SIGPIPE ignored, as under std: a reader that goes away (`elicit … |
    /// head`, a client that hangs up on the proxy) is a write error elicit
    /// handles, not a silent death; children start with it back at default
    /// (std's `Command` resets it).
    ///
    /// Standard descriptors 0–2 that are closed are opened on `/dev/null`, as
    /// std does, so that a file elicit opens can never become its stdout.
    pub fn prepare() {
        // SAFETY: plain libc calls on this process's own signal table and
        // descriptors, before any other thread exists.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
                fd,
                events: 0,
                revents: 0,
            });
            if libc::poll(fds.as_mut_ptr(), 3, 0) == -1 {
                for pfd in &mut fds {
                    if libc::fcntl(pfd.fd, libc::F_GETFD) == -1 {
                        pfd.revents = libc::POLLNVAL;
                    }
                }
            }
            for pfd in fds {
                if pfd.revents & libc::POLLNVAL != 0
                    && libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) != pfd.fd
                {
                    libc::abort();
                }
            }
        }
    }
}

/// # Safety
/// Called by the C runtime only, with `argc` valid strings in `argv`.
#[no_mangle]
pub unsafe extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
    startup::prepare();
    // The arguments as C hands them over: `std::env::args` is filled by
    // std's start-up, or on glibc alone by an initialiser of its own (a
    // musl build saw no arguments at all).
    let args = (0..usize::try_from(argc).unwrap_or(0)).map(|i| {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: C's `main` gets `argc` valid, NUL-terminated strings in
        // `argv`, alive for the whole process.
        let arg = unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) };
        std::ffi::OsStr::from_bytes(arg.to_bytes()).to_os_string()
    });
    let code = run(args);
    // std's runtime would flush stdout on the way out; C's exit does not
    // know Rust's buffer. Nothing is lost today (every line is flushed when
    // written), this keeps it so.
    let _ = std::io::stdout().flush();
    code
}

/// `Cli::parse()`, except that the command tree clap built is never freed:
/// it lives as long as the process anyway, and taking its thousands of
/// strings and vectors apart cost a short run more than parsing its flags
/// (0.06 M instructions).
fn parse_flags(args: impl Iterator<Item = std::ffi::OsString>) -> Cli {
    let mut command = Cli::command();
    let parsed = command
        .try_get_matches_from_mut(args)
        .and_then(|mut matches| {
            let cli = Cli::from_arg_matches_mut(&mut matches);
            std::mem::forget(matches);
            cli.map_err(|e| e.format(&mut command))
        });
    std::mem::forget(command);
    parsed.unwrap_or_else(|e| e.exit())
}

fn run(args: impl Iterator<Item = std::ffi::OsString>) -> i32 {
    let cli = parse_flags(args);
    elicit::color::set(cli.color);
    // Runs that last as long as a server or a stream does free memory and
    // need it back.
    if matches!(
        cli.command,
        Some(Command::Call(_) | Command::Proxy(_) | Command::Test(_))
    ) || cli.resolve.lines
    {
        ALLOC.retire();
    }
    let code = match cli.command {
        Some(Command::Call(args)) => commands::call::run(&args),
        Some(Command::Proxy(args)) => commands::proxy::run(&args),
        Some(Command::Test(args)) => commands::test::run(&args),
        Some(Command::Completions { shell }) => commands::shell::completions(shell),
        Some(Command::Man { command }) => commands::shell::man(command.as_deref()),
        Some(Command::Request { file, pretty }) => {
            commands::request::run_request(file.as_deref(), pretty)
        }
        Some(Command::Auth(action)) => commands::auth::run(action),
        Some(Command::Result {
            file,
            kind,
            input,
            pretty,
        }) => commands::request::run_result(file.as_deref(), kind, input.as_deref(), pretty),
        None => commands::resolve::run(&cli.resolve),
    };
    code.clamp(0, 255)
}
