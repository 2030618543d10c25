//! Unit tests of [`super`].

use super::*;

/// Neither output may contain anything a terminal would act on.
/// (Tag characters are allowed only inside a flag sequence.)
fn assert_inert(out: &str, block: bool) {
    let mut in_flag = false;
    for c in out.chars() {
        let ok_newline = block && c == '\n';
        assert!(
            ok_newline || !(c.is_control()),
            "control {c:?} left in {out:?}"
        );
        let flag_tag = in_flag && ('\u{e0020}'..='\u{e007f}').contains(&c);
        assert!(
            flag_tag || !is_invisible_format(c),
            "invisible {c:?} left in {out:?}"
        );
        in_flag = c == '\u{1f3f4}' || (flag_tag && c != '\u{e007f}');
    }
}

fn line(s: &str) -> String {
    let out = sanitize_line(s);
    assert_inert(&out, false);
    out
}

fn block(s: &str) -> String {
    let out = sanitize_block(s);
    assert_inert(&out, true);
    out
}

// ---- plain text passes through -------------------------------------

#[test]
fn plain_text_untouched() {
    for s in [
        "",
        "hello world",
        "Grüße, café, naïve, Ærøskøbing",
        "日本語のテキスト 中文 한국어",
        "مرحبا بالعالم", // Arabic: RTL script itself is fine, only controls are not
        "emoji 😀 🎉",
        "symbols ~!@#$%^&*()_+`-=[]{}|;':\",./<>?\\",
    ] {
        assert_eq!(line(s), s);
        assert_eq!(block(s), s);
    }
}

#[test]
fn emoji_zwj_sequences_preserved() {
    let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    let rainbow = "🏳\u{fe0f}\u{200d}🌈";
    let skin = "👍🏽";
    for s in [family, rainbow, skin] {
        assert_eq!(line(s), s);
    }
    // ZWNJ is kept too (Persian orthography needs it).
    assert_eq!(line("می\u{200c}خواهم"), "می\u{200c}خواهم");
}

#[test]
fn subdivision_flag_preserved() {
    let england = "🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}";
    assert_eq!(line(england), england);
    assert_eq!(line(&format!("a{england}b")), format!("a{england}b"));
}

#[test]
fn tag_characters_made_visible() {
    // "hi" smuggled in tag characters.
    assert_eq!(line("x\u{e0068}\u{e0069}"), "x<U+E0068><U+E0069>");
    // Flag without cancel tag: not a flag.
    assert_eq!(line("🏴\u{e0067}z"), "🏴<U+E0067>z");
    // Bare flag followed by cancel only: the cancel is shown.
    assert_eq!(line("🏴\u{e007f}"), "🏴<U+E007F>");
    // Too many tags for a subdivision flag: shown, not hidden.
    let long: String = std::iter::once('🏴')
        .chain(std::iter::repeat_n('\u{e0061}', 20))
        .chain(std::iter::once('\u{e007f}'))
        .collect();
    let out = line(&long);
    assert!(out.starts_with("🏴<U+E0061>"));
    assert!(out.ends_with("<U+E007F>"));
}

// ---- escape sequences are removed ------------------------------------

#[test]
fn osc8_hyperlink_keeps_only_text() {
    let s = "\x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\";
    assert_eq!(line(s), "click");
    // BEL-terminated variant.
    assert_eq!(line("\x1b]8;;https://evil\x07click\x1b]8;;\x07"), "click");
    // 8-bit OSC and ST.
    assert_eq!(
        line("\u{9d}8;;https://evil\u{9c}click\u{9d}8;;\u{9c}"),
        "click"
    );
}

#[test]
fn window_title_change_removed() {
    assert_eq!(line("\x1b]0;pwned\x07after"), "after");
    assert_eq!(line("before\x1b]2;pwned\x1b\\after"), "beforeafter");
}

#[test]
fn clear_screen_and_cursor_moves_removed() {
    assert_eq!(line("\x1b[2Jhello"), "hello");
    assert_eq!(line("\x1b[H\x1b[2J\x1b[3J"), "");
    assert_eq!(line("a\x1b[10;20Hb\x1b[5Ac\x1b[2Kd"), "abcd");
    assert_eq!(line("\x1b[?25l\x1b[?1049h"), ""); // hide cursor, alt screen
    assert_eq!(line("\x1b[1;31mred\x1b[0m"), "red");
    assert_eq!(line("\x1b[38;2;255;0;0mrgb\x1b[m"), "rgb");
    assert_eq!(line("\x1b[6n"), ""); // device status report
}

#[test]
fn eight_bit_csi_removed() {
    assert_eq!(line("a\u{9b}2Jb"), "ab");
    assert_eq!(line("\u{9b}31mred\u{9b}0m"), "red");
}

#[test]
fn dcs_sos_pm_apc_removed() {
    assert_eq!(line("a\x1bPq#0;2;0;0;0\x1b\\b"), "ab"); // sixel DCS
    assert_eq!(line("a\x1bXsos\x1b\\b"), "ab");
    assert_eq!(line("a\x1b^pm\x1b\\b"), "ab");
    assert_eq!(line("a\x1b_Gf=100;AAAA\x1b\\b"), "ab"); // kitty graphics APC
    assert_eq!(line("a\u{90}dcs\u{9c}b"), "ab");
    assert_eq!(line("a\u{9f}apc\u{9c}b"), "ab");
    // BEL does not end a DCS: the rest is dropped as unterminated.
    assert_eq!(line("a\x1bPx\x07b"), "a");
}

#[test]
fn two_byte_and_intermediate_escapes_removed() {
    assert_eq!(line("a\x1bcb"), "ab"); // RIS full reset
    assert_eq!(line("a\x1b7b\x1b8c"), "abc"); // save/restore cursor
    assert_eq!(line("a\x1bMb"), "ab"); // reverse index
    assert_eq!(line("a\x1b(Bb"), "ab"); // charset
    assert_eq!(line("a\x1b#8b"), "ab"); // DECALN fills screen with E
    assert_eq!(line("a\x1b%Gb"), "ab");
}

#[test]
fn unterminated_sequences_dropped_to_end() {
    assert_eq!(line("a\x1b[12;3"), "a");
    assert_eq!(line("a\x1b]0;title without end"), "a");
    assert_eq!(line("a\x1bPdcs"), "a");
    assert_eq!(line("a\x1b("), "a");
    assert_eq!(line("a\u{9b}"), "a");
    assert_eq!(line("a\u{9d}osc"), "a");
}

#[test]
fn lone_esc_visible() {
    assert_eq!(line("\x1b"), "^[");
    assert_eq!(line("abc\x1b"), "abc^[");
    // ESC ESC: the first cannot start a sequence.
    assert_eq!(line("\x1b\x1b"), "^[^[");
    assert_eq!(line("\x1b\x1b[2Jx"), "^[x");
    // ESC before a non-ASCII char or control.
    assert_eq!(line("\x1bé"), "^[é");
    assert_eq!(line("\x1b\x01"), "^[^A");
    assert_eq!(line("\x1b\x7f"), "^[^?");
    // OSC ended by a lone ESC at the very end.
    assert_eq!(line("\x1b]0;t\x1b"), "^[");
}

#[test]
fn malformed_sequences_do_not_swallow_text() {
    // CSI interrupted by a non-ASCII char: the sequence is dropped, the
    // text after it stays.
    assert_eq!(line("\x1b[12édone"), "édone");
    // CSI interrupted by a newline (terminals would execute the LF).
    assert_eq!(block("\x1b[1\n2J"), "\n2J");
    // CSI interrupted by another ESC sequence.
    assert_eq!(line("\x1b[1\x1b[2Jx"), "x");
    // OSC interrupted by a new CSI.
    assert_eq!(line("\x1b]0;t\x1b[31mx"), "x");
    // ESC intermediates then a control.
    assert_eq!(line("\x1b(\x01x"), "^Ax");
}

// ---- single controls are made visible --------------------------------

#[test]
fn c0_controls_caret_notation() {
    assert_eq!(line("\0"), "^@");
    assert_eq!(line("a\x01b"), "a^Ab");
    assert_eq!(line("\x07"), "^G"); // BEL outside a string
    assert_eq!(line("\x08"), "^H"); // backspace could overwrite text
    assert_eq!(line("\x0b\x0c"), "^K^L");
    assert_eq!(line("\x1f"), "^_");
    assert_eq!(line("\x7f"), "^?");
    let all: String = (0u8..0x20)
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\r' | 0x1b))
        .map(char::from)
        .collect();
    let out = line(&all);
    assert!(out.chars().all(|c| c.is_ascii_graphic()), "{out:?}");
}

#[test]
fn c1_controls_escaped() {
    assert_eq!(line("a\u{85}b"), "a\\u{85}b"); // NEL
    assert_eq!(line("\u{80}\u{8d}\u{9c}"), "\\u{80}\\u{8d}\\u{9c}");
}

#[test]
fn line_mode_whitespace() {
    assert_eq!(line("a\nb"), "a b");
    assert_eq!(line("a\r\nb"), "a b");
    assert_eq!(line("a\rb"), "a b");
    assert_eq!(line("a\tb"), "a b");
    assert_eq!(line("a\n\nb"), "a  b");
    assert_eq!(line("a\r\r\nb"), "a  b");
}

#[test]
fn block_mode_whitespace() {
    assert_eq!(block("a\nb"), "a\nb");
    assert_eq!(block("a\r\nb"), "a\nb");
    assert_eq!(block("a\rb"), "a\nb");
    assert_eq!(block("a\n\r\nb"), "a\n\nb");
    assert_eq!(block("a\tb"), "a    b");
    assert_eq!(block("\r"), "\n");
    // Everything else as in line mode.
    assert_eq!(block("x\x1b[2J\x01\u{202e}y"), "x^A<U+202E>y");
}

#[test]
fn bidi_controls_visible() {
    assert_eq!(line("file\u{202e}txt.exe"), "file<U+202E>txt.exe");
    for c in [
        '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
    ] {
        assert_eq!(line(&c.to_string()), format!("<U+{:04X}>", c as u32));
    }
}

#[test]
fn invisible_characters_visible() {
    assert_eq!(line("pay\u{200b}pal"), "pay<U+200B>pal");
    assert_eq!(line("a\u{2028}b\u{2029}c"), "a<U+2028>b<U+2029>c");
    assert_eq!(block("a\u{2028}b"), "a<U+2028>b");
    assert_eq!(line("\u{feff}bom"), "<U+FEFF>bom");
    assert_eq!(line("a\u{2060}b\u{00ad}c"), "a<U+2060>b<U+00AD>c");
    assert_eq!(line("\u{3164}"), "<U+3164>");
}

// ---- robustness -------------------------------------------------------

#[test]
fn large_inputs_linear_and_safe() {
    let big_text = "abc é 日本 ".repeat(100_000);
    assert_eq!(line(&big_text).len(), big_text.len());
    let escapes = "\x1b[2J".repeat(250_000); // 1 MB of escapes
    assert_eq!(line(&escapes), "");
    let unterminated = format!("x\x1b]{}", "a".repeat(1 << 20));
    assert_eq!(line(&unterminated), "x");
    let lone = "\x1b".repeat(1 << 20);
    assert_eq!(line(&lone).len(), 2 << 20);
    let flags = "🏴".repeat(100_000);
    assert_eq!(line(&flags), flags);
    let tags = format!("🏴{}", "\u{e0061}".repeat(100_000));
    assert!(line(&tags).len() > tags.len());
    let controls: String = (0..1_000_000u32)
        .map(|i| char::from_u32(i % 0xa0).unwrap_or('x'))
        .collect();
    block(&controls);
    line(&controls);
}

#[test]
fn every_short_sequence_is_safe() {
    // Exhaustive over short strings drawn from the interesting alphabet.
    let alphabet = [
        '\x1b',
        '[',
        ']',
        'P',
        '\\',
        '\x07',
        '\u{9b}',
        '\u{9c}',
        '\u{9d}',
        '\n',
        '\r',
        '\t',
        'a',
        '1',
        ';',
        '(',
        '\u{202e}',
        '🏴',
        '\u{e0061}',
        '\u{e007f}',
    ];
    let n = alphabet.len();
    for i in 0..n * n * n * n {
        let s: String = [i % n, (i / n) % n, (i / n / n) % n, (i / n / n / n) % n]
            .iter()
            .map(|&k| alphabet[k])
            .collect();
        line(&s);
        block(&s);
    }
}

#[test]
fn idempotent() {
    for s in [
        "\x1b[2Jx\u{202e}\x01\u{85}\ty\r\n",
        "🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}\u{e0061}",
        "\x1b",
    ] {
        let once = sanitize_line(s);
        assert_eq!(sanitize_line(&once), once);
        let once = sanitize_block(s);
        assert_eq!(sanitize_block(&once), once);
    }
}

// ---- looks_like_secret -------------------------------------------------

#[test]
fn secret_names_flagged() {
    for name in [
        "password",
        "Password",
        "PASSWORD",
        "newPassword",
        "new_password",
        "confirm-password",
        "password2",
        "passwords",
        "passwd",
        "passphrase",
        "passcode",
        "pin",
        "PIN",
        "pinCode",
        "PINCode",
        "pin_code",
        "user pin",
        "pin1",
        "secret",
        "clientSecret",
        "client_secret",
        "token",
        "accessToken",
        "refresh-token",
        "GITHUB_TOKEN",
        "apiKey",
        "APIKey",
        "api_key",
        "api-key",
        "x-api-key",
        "apikey",
        "APIKEY",
        "API Key",
        "accessKey",
        "aws_access_key_id",
        "private key",
        "privateKey",
        "credit card",
        "creditCardNumber",
        "card number",
        "cardNumber",
        "cvv",
        "CVV2",
        "cvc",
        "security code",
        "otp",
        "otpCode",
        "totp",
        "2fa",
        "2FA code",
        "twoFactorCode",
        "mfa_code",
        "one-time code",
        "verification code",
        "ssn",
        "SSN",
        "social security number",
        "credentials",
        "seed phrase",
    ] {
        assert!(looks_like_secret(name, None), "{name} should be flagged");
    }
}

#[test]
fn secret_titles_flagged() {
    assert!(looks_like_secret("field1", Some("Your password")));
    assert!(looks_like_secret("x", Some("Enter your API key")));
    assert!(looks_like_secret("x", Some("Passwort")));
    assert!(looks_like_secret("x", Some("Mot de passe")));
    assert!(looks_like_secret("x", Some("Contraseña")));
    assert!(looks_like_secret("x", Some("Пароль")));
    assert!(looks_like_secret("password", Some("harmless")));
}

#[test]
fn ordinary_names_not_flagged() {
    for name in [
        "",
        "name",
        "email",
        "username",
        "pinned",
        "isPinned",
        "spinner",
        "keyboard",
        "keyboardLayout",
        "monkey",
        "author",
        "authorName",
        "description",
        "secretary",
        "tokenizer",
        "passport",
        "compass",
        "bypass",
        "key",
        "sortKey",
        "primary key",
        "cardinality",
        "topic",
        "options",
        "descending",
        "spin",
        "opinion",
        "ssnake",
    ] {
        assert!(
            !looks_like_secret(name, None),
            "{name} should not be flagged"
        );
    }
    // Documented choice: `mfa` alone is flagged, even in a method selector.
    assert!(looks_like_secret("mfaMethod", None));
    assert!(!looks_like_secret("name", Some("Your full name")));
    assert!(!looks_like_secret("name", None));
}

#[test]
fn secret_detection_weird_input() {
    assert!(!looks_like_secret("", Some("")));
    assert!(!looks_like_secret("\x1b[2J\u{202e}", Some("\0\0")));
    assert!(!looks_like_secret(&"a".repeat(1 << 20), None));
    assert!(looks_like_secret(
        &format!("{}password", "x_".repeat(1 << 18)),
        None
    ));
    assert!(!looks_like_secret(&"aB1".repeat(300_000), None));
}

#[test]
fn max_term_len_covers_all_terms() {
    assert!(SECRET_TERMS.iter().all(|t| t.len() < MAX_TERM_LEN));
}

fn words(text: &str) -> Vec<String> {
    let (buf, ranges) = split_words(text);
    ranges.into_iter().map(|r| buf[r].to_owned()).collect()
}

#[test]
fn word_splitting() {
    assert_eq!(words("newPassword"), ["new", "password"]);
    assert_eq!(words("APIKey"), ["api", "key"]);
    assert_eq!(words("x-api_key id"), ["x", "api", "key", "id"]);
    assert_eq!(words("cvv2"), ["cvv", "2"]);
    assert_eq!(words("2FA"), ["2", "fa"]);
    assert_eq!(words("HTTPServer"), ["http", "server"]);
    assert_eq!(words("  "), Vec::<String>::new());
}
