//! elicit
