//! `--strict`: the lint rules on every elicitation of a live session.
