pub mod sse_reader;
