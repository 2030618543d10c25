//! Making untrusted, server-provided text safe to print in a terminal.
//!
//! Everything an MCP server sends (the elicitation `message`, field titles,
//! descriptions, enum labels, the server's own name, URLs) is attacker
//! controlled. Printed raw, it could:
//!
//! * drive the terminal with escape sequences: clear the screen and redraw a
//!   fake prompt, move the cursor over our own consent text, change the window
//!   title, or plant an OSC 8 hyperlink whose visible text differs from its
//!   target (the spec forbids clickable links outside the `url` field);
//! * reorder what the user reads with Unicode bidirectional controls
//!   (e.g. U+202E RIGHT-TO-LEFT OVERRIDE makes `exe.txt` read as `txt.exe`);
//! * hide text with invisible characters (zero-width spaces, tag characters
//!   used for "ASCII smuggling", line separators that some terminals render
//!   as a line break and others not at all).
//!
//! The policy is: **escape sequences are removed** (their payload is
//! presentation, never content, and showing `^[[2J` noise helps nobody),
//! while **single control and invisible characters are made visible** in an
//! unambiguous notation, so the user can see that something odd was sent
//! rather than having it silently disappear:
//!
//! | input                                  | output            |
//! |----------------------------------------|-------------------|
//! | C0 control (except ESC, `\t\n\r`)      | `^A` … `^_`, `^@` |
//! | DEL                                    | `^?`              |
//! | C1 control U+0080–U+009F (not CSI etc) | `\u{85}`          |
//! | lone ESC (nothing recognisable after)  | `^[`              |
//! | bidi / invisible format character      | `<U+202E>`        |
//!
//! The output never contains a C0/C1 control other than `\n` (block mode
//! only), never contains a bidi control, and is produced in one linear pass:
//! no input can make these functions panic or go quadratic.

use std::fmt::Write as _;

/// How line breaks and tabs are treated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// One-line labels: every line break and tab becomes one space.
    Line,
    /// Multi-line text: line breaks are normalised to `\n`, tabs expanded.
    Block,
}

/// Number of spaces a tab becomes in [`sanitize_block`].
///
/// A fixed width rather than tab stops: the text is usually printed indented
/// or inside a frame, so the terminal's own tab stops would not line up with
/// the column the text starts in anyway, and a literal tab could jump past a
/// frame border.
pub const TAB_WIDTH: usize = 4;

/// Longest run of tag characters (U+E0020–U+E007E) accepted after U+1F3F4
/// WAVING BLACK FLAG as an emoji subdivision flag (e.g. the flag of
/// England, `gbeng`). CLDR subdivision ids are at most 7 characters; anything
/// longer is not a flag and its tag characters are shown as `<U+E00xx>`.
const MAX_FLAG_TAGS: usize = 8;

/// Sanitises one-line text: field titles, enum labels, names, URLs shown for
/// consent.
///
/// Escape sequences are removed, other control and invisible characters are
/// made visible (see the module docs), and `\n`, `\r`, `\r\n` and `\t` each
/// become a single space so a label can never break the layout it is printed
/// in (a newline in a label could otherwise forge a new line of our UI).
/// For example `"\x1b[31mred\x1b[0m\nlabel"` becomes `"red label"`.
pub fn sanitize_line(s: &str) -> String {
    sanitize(s, Mode::Line)
}

/// Sanitises multi-line text such as the elicitation `message`.
///
/// Same rules as [`sanitize_line`], except that line structure is kept:
/// `\n` stays, `\r\n` and a lone `\r` become `\n` (a bare carriage return
/// would otherwise let later text overwrite the start of the line), and a tab
/// becomes [`TAB_WIDTH`] spaces.
pub fn sanitize_block(s: &str) -> String {
    sanitize(s, Mode::Block)
}

fn sanitize(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => escape(&mut chars, &mut out),
            // 8-bit CSI: a terminal that honours C1 controls would act on it
            // exactly like `ESC [`, so it is removed the same way.
            '\u{9b}' => skip_csi(&mut chars),
            // 8-bit OSC / DCS / SOS / PM / APC: likewise strings up to ST.
            '\u{9d}' => skip_string(&mut chars, true),
            '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars, false),
            '\r' | '\n' => {
                if c == '\r' && chars.clone().next() == Some('\n') {
                    chars.next();
                }
                out.push(match mode {
                    Mode::Line => ' ',
                    Mode::Block => '\n',
                });
            }
            '\t' => match mode {
                Mode::Line => out.push(' '),
                Mode::Block => out.extend(std::iter::repeat_n(' ', TAB_WIDTH)),
            },
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                // c < 0x20, so c + 0x40 is in '@'..='_'.
                out.push(char::from(c as u8 + 0x40));
            }
            '\u{7f}' => out.push_str("^?"),
            '\u{80}'..='\u{9f}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            '\u{1f3f4}' => {
                out.push(c);
                flag_tags(&mut chars, &mut out);
            }
            c if is_invisible_format(c) => push_code_point(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// Handles what follows an ESC. `chars` is positioned just after the ESC.
fn escape(chars: &mut std::str::Chars<'_>, out: &mut String) {
    let mut look = chars.clone();
    match look.next() {
        // A lone ESC at the very end: nothing to act on, but the server did
        // send it, so show it.
        None => out.push_str("^["),
        Some('[') => {
            *chars = look;
            skip_csi(chars);
        }
        Some(']') => {
            *chars = look;
            skip_string(chars, true);
        }
        Some('P' | 'X' | '^' | '_') => {
            *chars = look;
            skip_string(chars, false);
        }
        // ESC, intermediate bytes 0x20–0x2F, then a final byte 0x30–0x7E
        // (e.g. `ESC ( B` charset selection, `ESC # 8` screen alignment test).
        Some('\u{20}'..='\u{2f}') => {
            loop {
                let before = look.clone();
                match look.next() {
                    Some('\u{20}'..='\u{2f}') => {}
                    // Final byte, or unterminated: drop it all.
                    Some('\u{30}'..='\u{7e}') | None => break,
                    // Malformed: drop ESC + intermediates, keep what follows.
                    Some(_) => {
                        look = before;
                        break;
                    }
                }
            }
            *chars = look;
        }
        // Two-character escape (`ESC c` reset, `ESC 7` save cursor, `ESC M`
        // reverse index, ...).
        Some('\u{30}'..='\u{7e}') => *chars = look,
        // ESC followed by a control or non-ASCII character is not a sequence
        // a terminal would complete; show the ESC and process the next
        // character normally.
        Some(_) => out.push_str("^["),
    }
}

/// Skips the body of a CSI sequence: parameter bytes 0x30–0x3F and
/// intermediate bytes 0x20–0x2F up to and including a final byte 0x40–0x7E.
///
/// If anything else turns up the sequence is malformed; it is dropped and the
/// offending character is left for normal processing (it may itself be a
/// control that must be made visible, or the start of a new sequence). At end
/// of input the unterminated sequence is simply dropped.
fn skip_csi(chars: &mut std::str::Chars<'_>) {
    loop {
        let mut look = chars.clone();
        match look.next() {
            None => return,
            Some('\u{20}'..='\u{3f}') => *chars = look,
            Some('\u{40}'..='\u{7e}') => {
                *chars = look;
                return;
            }
            Some(_) => return,
        }
    }
}

/// Skips a control string (OSC, DCS, SOS, PM, APC) up to and including its
/// terminator: ST (`ESC \` or U+009C), or BEL for OSC (the xterm convention).
///
/// An ESC not followed by `\` ends the string the way a terminal's parser
/// would, and is then processed as the start of a new sequence. An
/// unterminated string runs to the end of the input and is dropped whole:
/// its content was never meant to be displayed.
fn skip_string(chars: &mut std::str::Chars<'_>, bel_terminates: bool) {
    loop {
        let before = chars.clone();
        match chars.next() {
            None | Some('\u{9c}') => return,
            Some('\u{7}') if bel_terminates => return,
            Some('\u{1b}') => {
                if chars.clone().next() == Some('\\') {
                    chars.next();
                } else {
                    *chars = before;
                }
                return;
            }
            Some(_) => {}
        }
    }
}

/// After U+1F3F4 WAVING BLACK FLAG: keeps a well-formed emoji tag sequence
/// (up to [`MAX_FLAG_TAGS`] tag characters U+E0020–U+E007E, then U+E007F
/// CANCEL TAG), which is how the flags of England, Scotland and Wales are
/// encoded. Anything else is left for the main loop, which shows tag
/// characters as `<U+E00xx>`: they are invisible and have been used to smuggle
/// hidden instructions in text.
fn flag_tags(chars: &mut std::str::Chars<'_>, out: &mut String) {
    let mut look = chars.clone();
    for _ in 0..=MAX_FLAG_TAGS {
        match look.next() {
            Some('\u{e0020}'..='\u{e007e}') => {}
            Some('\u{e007f}') => {
                let rest = look.as_str();
                let consumed = &chars.as_str()[..chars.as_str().len() - rest.len()];
                // Only a sequence with at least one tag is a flag.
                if consumed.chars().count() > 1 {
                    out.push_str(consumed);
                    *chars = look;
                }
                return;
            }
            _ => return,
        }
    }
}

/// Characters that change how surrounding text is displayed without being
/// visible themselves, and that have a history of use in spoofing.
///
/// * Bidirectional controls: U+061C, U+200E, U+200F, U+202A–U+202E,
///   U+2066–U+2069 ("Trojan Source", filename extension reversal).
/// * Zero-width / invisible: U+00AD soft hyphen, U+180E, U+200B, U+2060–U+2064,
///   U+206A–U+206F (deprecated format controls), U+FEFF, U+FFF9–U+FFFB,
///   U+1D173–U+1D17A, Hangul fillers U+115F, U+1160, U+3164, U+FFA0 and Khmer
///   U+17B4, U+17B5 (render as nothing, used for blank-looking names).
/// * U+2028 / U+2029: some terminals break the line, some show nothing.
/// * Tag characters U+E0000–U+E007F (except in flag sequences, see
///   [`flag_tags`]).
///
/// Deliberately *not* included: U+200C ZERO WIDTH NON-JOINER and U+200D ZERO
/// WIDTH JOINER (needed for emoji sequences and for Persian, Indic scripts)
/// and variation selectors U+FE00–U+FE0F (emoji vs text presentation).
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{061c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180e}'
            | '\u{200b}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{3164}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e007f}'
    )
}

fn push_code_point(out: &mut String, c: char) {
    let _ = write!(out, "<U+{:04X}>", c as u32);
}

/// Terms that, as a whole word or as adjacent words run together, mark a
/// field as asking for a credential. Compared after lower-casing; a trailing
/// plural `s` is also tried (`tokens`, `passwords`).
///
/// Multi-word terms are written without separators: words of the field name
/// are also joined in windows of two and three, so `api_key`, `apiKey`,
/// `API-Key`, `api key` and `apikey` all match `apikey`.
const SECRET_TERMS: &[&str] = &[
    // passwords and PINs
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "passcode",
    "pin",
    "pincode",
    // secrets, tokens and keys
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
    "signingkey",
    "encryptionkey",
    "credential",
    "seedphrase",
    "recoveryphrase",
    "mnemonic",
    "recoverycode",
    "backupcode",
    "authcode",
    "authorizationcode",
    // payment
    "creditcard",
    "debitcard",
    "cardnumber",
    "cardno",
    "cvv",
    "cvc",
    "cvv2",
    "cvc2",
    "securitycode",
    // one-time and second-factor codes
    "otp",
    "totp",
    "hotp",
    "2fa",
    "mfa",
    "twofactor",
    "onetimecode",
    "verificationcode",
    // national identifiers
    "ssn",
    "socialsecuritynumber",
    // "password" in a few other languages, for titles
    "passwort",
    "kennwort",
    "motdepasse",
    "contraseña",
    "contrasena",
    "senha",
    "wachtwoord",
    "lösenord",
    "salasana",
    "hasło",
    "пароль",
];

/// Longest entry of [`SECRET_TERMS`] in bytes, plus one for a plural `s`.
const MAX_TERM_LEN: usize = 32;

/// Whether a form field looks like it asks for a credential (password, PIN,
/// API key, token, card number, one-time code, SSN, ...).
///
/// Servers must not use form mode for sensitive data; this lets the client
/// warn when one apparently does. Both the property key and its `title` are
/// checked.
///
/// The text is split into words at every non-alphanumeric character, at
/// camelCase boundaries (`newPassword`, `APIKey` → `api key`) and between
/// letters and digits (`pin1`, `cvv2`). Matching is by **whole word** (or
/// adjacent words joined), never by substring, which is what avoids the
/// classic false positives: `pinned`, `spinner`, `keyboard`, `monkey`,
/// `author`, `description`, `passport` are not flagged.
///
/// Deliberate choices:
/// * `secretary` and `tokenizer` are **not** flagged: they are different
///   words, and substring matching would flag them.
/// * A bare `key` is **not** flagged (`key` is often a lookup key or a
///   keyboard shortcut); `api key`, `private key`, `access key` are.
/// * `secret` and `token` alone **are** flagged, so `client secret`,
///   `secret santa`, `auth token` and `token count` all are: a false warning
///   costs the user a glance, a missed one can cost a credential.
/// * `2fa`, `mfa`, `otp` alone are flagged (a `2FA method` selector gets a
///   harmless warning).
pub fn looks_like_secret(name: &str, title: Option<&str>) -> bool {
    text_looks_like_secret(name) || title.is_some_and(text_looks_like_secret)
}

fn text_looks_like_secret(text: &str) -> bool {
    let (buf, words) = split_words(text);
    // Words are stored back to back in `buf`, so a window of adjacent words
    // joined together is just a slice: no allocation per candidate.
    for (i, first) in words.iter().enumerate() {
        for last in words.iter().skip(i).take(3) {
            let joined = &buf[first.start..last.end];
            if joined.len() > MAX_TERM_LEN {
                break;
            }
            if is_secret_term(joined) {
                return true;
            }
        }
    }
    false
}

fn is_secret_term(word: &str) -> bool {
    static TERMS: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    let terms = TERMS.get_or_init(|| SECRET_TERMS.iter().copied().collect());
    terms.contains(word)
        || word
            .strip_suffix('s')
            .is_some_and(|singular| terms.contains(singular))
}

/// Splits an identifier or phrase into lower-case words, returned as one
/// string holding the words back to back plus the byte range of each word.
///
/// Boundaries: any non-alphanumeric character; lower→upper (`newPassword`);
/// the last capital of an acronym before a lower-case letter (`APIKey` →
/// `API`, `Key`); letter↔digit (`pin2` → `pin`, `2`).
fn split_words(text: &str) -> (String, Vec<std::ops::Range<usize>>) {
    let mut buf = String::with_capacity(text.len());
    let mut words = Vec::new();
    let mut start = 0;
    let mut prev: Option<char> = None;
    let mut iter = text.chars().peekable();
    while let Some(c) = iter.next() {
        if !c.is_alphanumeric() {
            if buf.len() > start {
                words.push(start..buf.len());
                start = buf.len();
            }
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let next_is_lower = iter.peek().is_some_and(|n| n.is_lowercase());
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_is_lower)
                || (p.is_numeric() != c.is_numeric());
            if boundary && buf.len() > start {
                words.push(start..buf.len());
                start = buf.len();
            }
        }
        buf.extend(c.to_lowercase());
        prev = Some(c);
    }
    if buf.len() > start {
        words.push(start..buf.len());
    }
    (buf, words)
}

#[cfg(test)]
mod tests;
