//! Windows: `windows-sys`, `crossterm` and std.

mod access;
mod acl;
pub mod fs;
mod listeners;
pub mod local;
pub mod process;
pub mod signals;
pub mod terminal;
