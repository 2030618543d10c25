//! Windows: `windows-sys`, `crossterm` and std.

mod access;
mod acl;
pub mod fs;
pub mod local;
mod listeners;
pub mod process;
pub mod signals;
pub mod terminal;
