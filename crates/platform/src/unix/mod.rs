//! Unix (Linux and macOS): `rustix`, `signal-hook` and std.

#[cfg(any(target_os = "macos", test))]
mod darwin_listeners;
pub mod fs;
#[cfg(target_os = "linux")]
mod listeners;
pub mod local;
#[cfg(target_os = "linux")]
pub mod pipe;
pub mod process;
pub mod signals;
pub mod terminal;
