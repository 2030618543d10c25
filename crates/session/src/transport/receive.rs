//! Waiting for what a transport's threads hand over, with a time limit
//! and a Ctrl-C ending the wait: below every transport that reads on a
//! thread of its own.

use std::time::{Duration, Instant};

use super::queue::{QueueEmpty, QueueReceiver};
use super::seam::{Delivery, Incoming};
use elicit_core::error::{ElicitError, ServerError};

/// [`receive_from`] for a channel of [`Delivery`]s.
pub(crate) fn receive_delivery(
    incoming: &QueueReceiver<Delivery>,
    timeout: Option<Duration>,
) -> Result<Incoming, ElicitError> {
    match wait_on(incoming, timeout)? {
        Some(d) => d,
        None => Ok(Incoming::TimedOut),
    }
}

/// Waits on a transport's channel of incoming messages, up to `timeout`
/// (None: forever); [`Incoming::TimedOut`] when it passes. A Ctrl-C pressed
/// meanwhile ends the wait with an error.
pub fn receive_from(
    incoming: &QueueReceiver<Incoming>,
    timeout: Option<Duration>,
) -> Result<Incoming, ElicitError> {
    Ok(wait_on(incoming, timeout)?.unwrap_or(Incoming::TimedOut))
}

/// The next item of `incoming`, or None when `timeout` passes.
fn wait_on<T>(
    incoming: &QueueReceiver<T>,
    timeout: Option<Duration>,
) -> Result<Option<T>, ElicitError> {
    let started = Instant::now();
    loop {
        if elicit_platform::handlers::take_interrupt() {
            return Err(ElicitError::Server(ServerError::Interrupted));
        }
        let mut slice = Duration::from_millis(100);
        if let Some(t) = timeout {
            let left = t.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Ok(None);
            }
            slice = slice.min(left);
        }
        match incoming.recv_timeout(slice) {
            Ok(m) => return Ok(Some(m)),
            Err(QueueEmpty::Timeout) => {}
            Err(QueueEmpty::Disconnected) => {
                return Err(ElicitError::Server(ServerError::OutputEnded))
            }
        }
    }
}
