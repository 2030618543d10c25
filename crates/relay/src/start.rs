//! Starting the relay core: the core itself ([`Relay`]) and the threads
//! that work for it (the resolver, the keep-alives), which the core never
//! starts again. Kept apart from the core so that the threads' files build
//! on the core's, never the other way.

use std::sync::atomic::AtomicU64;
use std::sync::{mpsc, Arc, Mutex};

use super::keepalive::{keep_alive, KEEPALIVE_INTERVAL};
use super::resolver::resolver;
use super::state::{Job, State};
use super::{Relay, RelayOptions, Sides};
use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::resolve::Resolver;

impl<S: Sides> Relay<S> {
    /// A relay over `side`, with its resolver thread answering through
    /// `scripted` answers, then `person`.
    pub(crate) fn start(
        side: S,
        options: RelayOptions,
        scripted: ScriptedAnswers,
        person: Box<dyn Resolver + Send>,
    ) -> Arc<Self> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let relay = Arc::new_cyclic(|me| Relay {
            me: me.clone(),
            side,
            state: Mutex::new(State::default()),
            options,
            next_retry: AtomicU64::new(1),
            jobs,
            unused_answers: Mutex::new(scripted.field_names().map(str::to_string).collect()),
            resolving: Mutex::new((0, None, 0)),
        });
        let weak = Arc::downgrade(&relay);
        std::thread::spawn(move || resolver(weak, scripted, person, job_rx));
        let weak = Arc::downgrade(&relay);
        let interval = relay
            .options
            .keepalive_interval
            .unwrap_or(KEEPALIVE_INTERVAL);
        std::thread::spawn(move || keep_alive(weak, interval));
        relay
    }
}
