//! Windows: `windows-sys`, `crossterm` and std.

pub mod fs;
pub mod process;
pub mod signals;
pub mod terminal;
