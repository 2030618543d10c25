//! Answer files with rules (`--answers FILE`).
