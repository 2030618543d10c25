//! The flags whose values are one of a few words. clap stays in the binary:
//! the library's enums know nothing of it, so each has its flag's twin here,
//! which says how it is spelt and shown in `--help`, and converts into it.

use clap::ValueEnum;

/// Defines a flag's value enum and its conversion into the library's enum of
/// the same variants.
macro_rules! flag_value {
    ($(#[$meta:meta])* $name:ident => $lib:path { $($(#[$vmeta:meta])* $variant:ident,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl From<$name> for $lib {
            fn from(value: $name) -> $lib {
                use $lib as Lib;
                match value {
                    $($name::$variant => Lib::$variant,)*
                }
            }
        }
    };
}

flag_value! {
    /// `--color`: when to colour what elicit draws.
    Color => elicit::terminal::color::ColorChoice {
        /// Colour a terminal unless NO_COLOR is set or TERM=dumb.
        Auto,
        /// Always colour, even under NO_COLOR.
        Always,
        /// Never colour.
        Never,
    }
}

/// `--protocol` of `call`, `test` and `proxy`: which lifecycle to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// The initialize handshake; 2026-07-28 discovery when the server
    /// refuses it.
    Auto,
    #[value(name = "2025-06-18")]
    V2025_06_18,
    #[value(name = "2025-11-25")]
    V2025_11_25,
    #[value(name = "2026-07-28")]
    V2026_07_28,
}

impl From<Protocol> for elicit::mcp::client::ProtocolChoice {
    fn from(value: Protocol) -> Self {
        use elicit::lint::Revision as R;
        use elicit::mcp::client::ProtocolChoice as P;
        match value {
            Protocol::Auto => P::Auto,
            Protocol::V2025_06_18 => P::Only(R::V2025_06_18),
            Protocol::V2025_11_25 => P::Only(R::V2025_11_25),
            Protocol::V2026_07_28 => P::Only(R::V2026_07_28),
        }
    }
}

flag_value! {
    /// `--ui`: where a person answers.
    #[derive(Default)]
    Ui => elicit::person::Ui {
        /// The terminal when one opens, else the browser page.
        #[default]
        Auto,
        /// The terminal only (an error when there is none).
        Terminal,
        /// The local browser page.
        Browser,
    }
}

flag_value! {
    /// `--transport`: which transport reaches a URL.
    Transport => elicit::transport::TransportChoice {
        /// Streamable HTTP, falling back to the legacy HTTP+SSE transport
        /// when the server refuses the POST.
        Auto,
        /// Streamable HTTP only.
        Http,
        /// The legacy HTTP+SSE transport (2024-11-05).
        Sse,
    }
}

flag_value! {
    /// `elicit lint --protocol`: the revision whose rules apply.
    Revision => elicit::lint::Revision {
        #[value(name = "2025-06-18")]
        V2025_06_18,
        #[value(name = "2025-11-25")]
        V2025_11_25,
        #[value(name = "2026-07-28")]
        V2026_07_28,
    }
}
