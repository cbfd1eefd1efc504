//! Secret redaction: masks common credentials before text reaches the model
//! (excerpts, snapshots, summaries). The original stays only in the spill store.
//!
//! Detectors are hand-written scanners, all kinds in one pass: provider API
//! keys, AWS access key ids and secret keys (40 base64 characters standing as a
//! value), GitHub/GitLab/Slack/Stripe/Google/SendGrid/DigitalOcean/Vault/Discord
//! tokens, Slack webhook URLs, private key blocks (JSON-escaped too), JWTs,
//! `Authorization:` header credentials, `PASSWORD=`/`SECRET=`/`x-api-key:`/
//! `AccountKey=`/Docker `"auth":`-style assignments (YAML and `.env` too, quoted
//! passphrases with spaces), `--password <pw>` flags, `mysql -p<password>` and
//! URLs with credentials (`redis://:pw@host`). `tests/redact_corpus.rs` measures
//! the detection rate on realistic tool output (98.3%, 58 of 59).
//!
//! Why not `regex-lite` (a dependency already): six of its patterns standing
//! for a fifth of these detectors (prefixed tokens, AWS key ids, JWTs, Slack
//! webhooks, private key blocks, `Authorization:` headers) scan the shared
//! traces' 7 MiB of tool output at 4.3 MiB/s, the scanners finding every kind
//! at 98 MiB/s (`cargo bench --bench redact`: `regex_lite_subset` against
//! `trace_outputs`, 2-core machine).

use std::borrow::Cow;

use serde::Serialize;

/// What a redaction pass masked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Redactions {
    /// Number of secrets masked.
    pub count: usize,
    /// Kinds masked, in order of first appearance (no values).
    pub kinds: Vec<&'static str>,
}

impl Redactions {
    fn add(&mut self, kind: &'static str) {
        self.count += 1;
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
    }

    /// Adds another pass's counts.
    pub fn merge(&mut self, other: &Redactions) {
        self.count += other.count;
        for k in &other.kinds {
            if !self.kinds.contains(k) {
                self.kinds.push(k);
            }
        }
    }
}

/// Redaction results of texts seen before (checked against the text itself,
/// [`crate::hash::TextMap`]), so a session that re-emits the same excerpts,
/// snapshots and summaries every turn scans each only once. Only texts of 64
/// bytes or more are kept; bounded by the bytes it holds, texts and masked
/// copies (it starts over past 16 MiB of either or 50,000 entries). The cache
/// only saves work: results never depend on it, nor on another session's texts.
#[derive(Debug, Default)]
pub struct RedactCache {
    entries: crate::hash::TextMap<(Option<String>, Redactions)>,
    bytes: usize,
    /// Bytes scanned (texts not found in the cache).
    pub scanned_bytes: u64,
}

/// Texts shorter than this are scanned without the cache.
const MIN_CACHED_BYTES: usize = 64;
/// Bytes of masked copies a [`RedactCache`] holds at most (and of texts).
const MAX_CACHED_BYTES: usize = 16 << 20;
/// Entries a [`RedactCache`] holds at most.
const MAX_CACHED_ENTRIES: usize = 50_000;

impl RedactCache {
    /// [`redact`], remembered.
    pub fn redact<'t>(&mut self, text: &'t str) -> (Cow<'t, str>, Redactions) {
        if text.len() < MIN_CACHED_BYTES {
            self.scanned_bytes += text.len() as u64;
            return redact(text);
        }
        if let Some((masked, found)) = self.entries.get(text) {
            let out = match masked {
                Some(m) => Cow::Owned(m.clone()),
                None => Cow::Borrowed(text),
            };
            return (out, found.clone());
        }
        self.scanned_bytes += text.len() as u64;
        let (out, found) = redact(text);
        let masked = match &out {
            Cow::Owned(m) => Some(m.clone()),
            Cow::Borrowed(_) => None,
        };
        let size = masked.as_ref().map_or(0, String::len);
        if self.entries.len() >= MAX_CACHED_ENTRIES || self.bytes + size > MAX_CACHED_BYTES {
            self.entries.clear();
            self.bytes = 0;
        }
        if size <= MAX_CACHED_BYTES {
            self.bytes += size;
            let entry = (masked, found.clone());
            self.entries
                .insert(text, entry, MAX_CACHED_ENTRIES, MAX_CACHED_BYTES);
        }
        (out, found)
    }
}

/// Token prefixes followed by a run of token characters, with the minimum run length.
const PREFIXED: &[(&str, &str, usize)] = &[
    ("sk-ant-", "anthropic-key", 20),
    ("sk-proj-", "openai-key", 20),
    ("sk-", "openai-key", 20),
    ("ghp_", "github-token", 30),
    ("gho_", "github-token", 30),
    ("ghu_", "github-token", 30),
    ("ghs_", "github-token", 30),
    ("ghr_", "github-token", 30),
    ("github_pat_", "github-token", 30),
    ("glpat-", "gitlab-token", 20),
    ("xoxb-", "slack-token", 20),
    ("xoxp-", "slack-token", 20),
    ("xoxa-", "slack-token", 20),
    ("sk_live_", "stripe-key", 20),
    ("rk_live_", "stripe-key", 20),
    ("sk_test_", "stripe-key", 20),
    ("rk_test_", "stripe-key", 20),
    ("whsec_", "stripe-webhook-secret", 24),
    ("dop_v1_", "digitalocean-token", 64),
    ("doo_v1_", "digitalocean-token", 64),
    ("dor_v1_", "digitalocean-token", 64),
    ("hvs.", "vault-token", 24),
    ("hvb.", "vault-token", 24),
    ("AIza", "google-api-key", 35),
    ("hf_", "huggingface-token", 30),
    ("npm_", "npm-token", 36),
];

/// Assignment names whose values are secrets (matched case-insensitively as a suffix).
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "secret_key",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
    "client_secret",
    "auth_token",
    "secret_access_key",
    "private_key_id",
    "accountkey",
    "accesskey",
];

/// Names whose values are passwords: shorter values count (`password: hunter2`).
const PASSWORD_NAMES: &[&str] = &["password", "passwd", "pwd", "passphrase"];

/// Names matched whole, not as a suffix: `auth` of a Docker `config.json`
/// (`base64(user:password)`). Flags also take `--pass` ([`password_flag`]).
const EXACT_SECRET_NAMES: &[&str] = &["auth"];

/// Words of prose: a value with spaces holding one is a description, not a
/// passphrase (`"password": "The password of the user"`).
const PROSE_WORDS: &[&str] = &[
    "the", "a", "an", "to", "of", "for", "your", "be", "use", "used", "if", "in", "and", "or",
    "with", "not", "this", "that", "from", "by", "on", "as", "user", "password", "secret", "token",
    "key", "enter", "must", "should", "will",
];

/// Most words of a passphrase (a value with spaces).
const MAX_PASSPHRASE_WORDS: usize = 8;

/// Values of password-like names that are not secrets.
const NOT_PASSWORDS: &[&str] = &[
    "none",
    "null",
    "true",
    "false",
    "str",
    "string",
    "required",
    "optional",
    "changeme",
    "xxxx",
    "****",
    "redacted",
    // Placeholders of tests and examples (`client.login(password='password')`).
    "password",
    "passwd",
    "secret",
    "admin",
    "test",
    "testing",
    "testpass",
    "testpassword",
    "dummy",
    "example",
    "foobar",
    "pass",
    "12345678",
    "qwerty",
];

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Masks secrets in `text`. Returns the text (borrowed when nothing was found).
pub fn redact(text: &str) -> (Cow<'_, str>, Redactions) {
    let mut found = Redactions::default();
    let spans = find_secrets(text, &mut found);
    if spans.is_empty() {
        return (Cow::Borrowed(text), found);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end, kind) in spans {
        out.push_str(text.get(last..start).unwrap_or(""));
        out.push_str("[REDACTED:");
        out.push_str(kind);
        out.push(']');
        last = end;
    }
    out.push_str(text.get(last..).unwrap_or(""));
    (Cow::Owned(out), found)
}

/// Byte spans `(start, end, kind)` of secrets, sorted and non-overlapping.
///
/// One pass over the bytes. Every detector but the `://` and `=`/`:` ones
/// starts at a word boundary on a letter, a digit, `+`, `/` or `-`; inside a
/// word only `=` and `:` (never token bytes) start anything, so the rest of
/// a word is skipped at once. Spans found by the pass end where it goes on,
/// so only private-key blocks (found first) can lie ahead of it.
fn find_secrets(text: &str, found: &mut Redactions) -> Vec<(usize, usize, &'static str)> {
    let b = text.as_bytes();
    let mut spans: Vec<(usize, usize, &'static str)> = Vec::new();
    private_key_blocks(text, &mut spans);
    let blocks = spans.clone();
    let mut next_block = 0;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        while blocks.get(next_block).is_some_and(|&(_, e, _)| e <= i) {
            next_block += 1;
        }
        if let Some(&(s, e, _)) = blocks.get(next_block) {
            if i >= s {
                i = e;
                continue;
            }
        }
        let at_boundary = i == 0 || !is_token_byte(b.get(i - 1).copied().unwrap_or(b' '));
        if at_boundary && (c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-')) {
            if let Some(span) = word_secret(b, i) {
                i = span.1;
                spans.push(span);
                continue;
            }
        }
        if c == b':' && b.get(i + 1) == Some(&b'/') && b.get(i + 2) == Some(&b'/') {
            if let Some(span) = url_password(b, i + 3) {
                spans.push(span);
                i = span.1;
                continue;
            }
        }
        if matches!(c, b'=' | b':') {
            if let Some(span) = secret_assignment(b, i) {
                spans.push(span);
                i = span.1;
                continue;
            }
        }
        i = if is_token_byte(c) {
            run_end(b, i + 1, is_token_byte)
        } else {
            i + 1
        };
    }
    clean_spans(text, spans, found)
}

/// A secret starting at the word boundary `i`, by the first detector that finds one.
fn word_secret(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    prefixed_token(b, i)
        .or_else(|| aws_key_id(b, i))
        .or_else(|| aws_secret_key(b, i))
        .or_else(|| sendgrid_key(b, i))
        .or_else(|| slack_webhook(b, i))
        .or_else(|| authorization(b, i))
        .or_else(|| mysql_password(b, i))
        .or_else(|| password_flag(b, i))
        .or_else(|| jwt(b, i))
        .or_else(|| discord_token(b, i))
}

/// `spans` sorted, without those off char boundaries, overlapping an
/// earlier one or already masked; each kept one counted in `found`.
fn clean_spans(
    text: &str,
    mut spans: Vec<(usize, usize, &'static str)>,
    found: &mut Redactions,
) -> Vec<(usize, usize, &'static str)> {
    spans.sort_by_key(|s| s.0);
    // Keep spans on char boundaries and non-overlapping.
    let mut clean: Vec<(usize, usize, &'static str)> = Vec::with_capacity(spans.len());
    for (s, e, k) in spans {
        if !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            continue;
        }
        if clean.last().is_some_and(|&(_, le, _)| s < le)
            || text.get(s..e).is_some_and(|v| v.starts_with("[REDACTED:"))
        {
            continue;
        }
        found.add(k);
        clean.push((s, e, k));
    }
    clean
}

fn run_end(b: &[u8], mut i: usize, ok: impl Fn(u8) -> bool) -> usize {
    while b.get(i).is_some_and(|&c| ok(c)) {
        i += 1;
    }
    i
}

fn prefixed_token(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    let rest = b.get(i..)?;
    let first = *rest.first()?;
    // Most words start with no prefix's first byte: one test, not one per prefix.
    if !PREFIXED
        .iter()
        .any(|&(prefix, _, _)| prefix.as_bytes().first() == Some(&first))
    {
        return None;
    }
    for &(prefix, kind, min) in PREFIXED {
        if rest.starts_with(prefix.as_bytes()) {
            let start = i + prefix.len();
            let end = run_end(b, start, is_token_byte);
            let run = b.get(start..end)?;
            // Real keys mix letters and digits; this skips words like `sk-learn-…`.
            let has_digit = run.iter().any(u8::is_ascii_digit);
            let has_alpha = run.iter().any(u8::is_ascii_alphabetic);
            if end - start >= min && has_digit && has_alpha {
                return Some((i, end, kind));
            }
        }
    }
    None
}

fn aws_key_id(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    let rest = b.get(i..)?;
    if !(rest.starts_with(b"AKIA") || rest.starts_with(b"ASIA")) {
        return None;
    }
    let end = run_end(b, i + 4, |c| c.is_ascii_uppercase() || c.is_ascii_digit());
    (end - i == 20 && !b.get(end).is_some_and(|&c| is_token_byte(c))).then_some((
        i,
        end,
        "aws-access-key-id",
    ))
}

fn is_base64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'+' || c == b'/'
}

/// An AWS secret access key standing as a value: exactly 40 base64
/// characters with upper case, lower case and digits (so never a 40-hex git
/// SHA), at the start of a line or right after `=`, `:`, `,` or a quote.
fn aws_secret_key(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    if i > 0 && b.get(i - 1).is_some_and(|&c| is_base64(c) || c == b'=') {
        return None;
    }
    // A run of exactly 40 ends at `i + 40`: most words fail this at once.
    if !b.get(i + 39).is_some_and(|&c| is_base64(c)) || b.get(i + 40).is_some_and(|&c| is_base64(c))
    {
        return None;
    }
    let end = run_end(b, i, is_base64);
    if end - i != 40 || b.get(end).is_some_and(|&c| is_token_byte(c) || c == b'=') {
        return None;
    }
    let run = b.get(i..end)?;
    let upper = run.iter().any(u8::is_ascii_uppercase);
    let lower = run.iter().any(u8::is_ascii_lowercase);
    let digit = run.iter().any(u8::is_ascii_digit);
    if !(upper && lower && digit) {
        return None;
    }
    let mut k = i;
    while k > 0 && matches!(b.get(k - 1), Some(b' ' | b'\t')) {
        k -= 1;
    }
    let standalone = k == 0
        || matches!(
            b.get(k - 1),
            Some(b'=' | b':' | b',' | b'"' | b'\'' | b'\n')
        );
    standalone.then_some((i, end, "aws-secret-key"))
}

/// `SG.<id>.<secret>`: a SendGrid API key.
fn sendgrid_key(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    if !b.get(i..)?.starts_with(b"SG.") {
        return None;
    }
    let e1 = run_end(b, i + 3, is_token_byte);
    if e1 - (i + 3) < 16 || b.get(e1) != Some(&b'.') {
        return None;
    }
    let e2 = run_end(b, e1 + 1, is_token_byte);
    (e2 - (e1 + 1) >= 16).then_some((i, e2, "sendgrid-key"))
}

/// `hooks.slack.com/services/T…/B…/…` (also `/workflows/`, `/triggers/`):
/// the path is the secret.
fn slack_webhook(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    const HOST: &[u8] = b"hooks.slack.com/";
    let rest = b.get(i..)?;
    if !rest.starts_with(HOST) {
        return None;
    }
    let path = ["services/", "workflows/", "triggers/"].iter().find(|p| {
        rest.get(HOST.len()..)
            .is_some_and(|r| r.starts_with(p.as_bytes()))
    })?;
    let start = i + HOST.len() + path.len();
    let end = run_end(b, start, |c| is_token_byte(c) || c == b'/');
    (end - start >= 20).then_some((start, end, "slack-webhook"))
}

/// `Authorization: <scheme> <credentials>` (any case, in a header, a curl
/// flag or a dict): the credentials. Variables and templates (`$TOKEN`,
/// `{token}`) are not secrets.
fn authorization(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    const NAME: &[u8] = b"authorization";
    let name = b.get(i..i + NAME.len())?;
    if !name.eq_ignore_ascii_case(NAME) {
        return None;
    }
    let mut k = run_end(b, i + NAME.len(), |c| matches!(c, b'"' | b'\'' | b' '));
    if b.get(k) != Some(&b':') {
        return None;
    }
    k = run_end(b, k + 1, |c| matches!(c, b'"' | b'\'' | b' '));
    let scheme_end = run_end(b, k, |c| c.is_ascii_alphabetic());
    if scheme_end == k || b.get(scheme_end) != Some(&b' ') {
        return None;
    }
    let start = run_end(b, scheme_end, |c| c == b' ');
    let end = run_end(b, start, |c| {
        !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\'' | b',' | b';')
    });
    let value = b.get(start..end)?;
    let template = value
        .iter()
        .any(|c| matches!(c, b'$' | b'{' | b'}' | b'<' | b'>' | b'(' | b')'));
    (value.len() >= 8 && !template).then_some((start, end, "authorization"))
}

/// `mysql … -p<password>` (also `mysqldump`, `mariadb`): the password glued to `-p`.
fn mysql_password(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    if b.get(i..i + 2)? != b"-p" || i == 0 || b.get(i - 1) != Some(&b' ') {
        return None;
    }
    let start = i + 2;
    let end = run_end(b, start, |c| {
        !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\'')
    });
    if end - start < 4 || b.get(start) == Some(&b'$') {
        return None;
    }
    let line_start = b
        .get(..i)?
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1);
    let line = std::str::from_utf8(b.get(line_start..i)?).ok()?;
    (line.contains("mysql") || line.contains("mariadb")).then_some((start, end, "mysql-password"))
}

fn jwt(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    if !b.get(i..)?.starts_with(b"eyJ") {
        return None;
    }
    let b64 = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    let e1 = run_end(b, i, b64);
    if e1 - i < 10 || b.get(e1) != Some(&b'.') || !b.get(e1 + 1..)?.starts_with(b"eyJ") {
        return None;
    }
    let e2 = run_end(b, e1 + 1, b64);
    if e2 - e1 < 10 || b.get(e2) != Some(&b'.') {
        return None;
    }
    let e3 = run_end(b, e2 + 1, b64);
    (e3 - e2 > 8).then_some((i, e3, "jwt"))
}

fn private_key_blocks(text: &str, spans: &mut Vec<(usize, usize, &'static str)>) {
    let mut from = 0;
    while let Some(pos) = text.get(from..).and_then(|t| t.find("-----BEGIN ")) {
        let start = from + pos;
        // The header ends with a line break, or an escaped one inside a JSON
        // string (`"private_key": "-----BEGIN PRIVATE KEY-----\\nMII…"`).
        let Some(header_end) = text.get(start..).and_then(|t| {
            t.match_indices("-----").skip(1).map(|(p, _)| p).find(|&p| {
                t.get(p + 5..).is_some_and(|r| {
                    r.starts_with('\n') || r.starts_with('\r') || r.starts_with("\\n")
                })
            })
        }) else {
            break;
        };
        let header = text.get(start..start + header_end).unwrap_or("");
        if !header.contains("PRIVATE KEY") {
            from = start + 11;
            continue;
        }
        let end = text
            .get(start..)
            .and_then(|t| t.find("-----END "))
            .and_then(|e| {
                let after = start + e + 9;
                text.get(after..)
                    .and_then(|t| t.find("-----"))
                    .map(|x| after + x + 5)
            })
            .unwrap_or(text.len());
        spans.push((start, end, "private-key"));
        from = end;
    }
}

/// `scheme://user:password@host` → the password.
fn url_password(b: &[u8], start: usize) -> Option<(usize, usize, &'static str)> {
    let user_end = run_end(b, start, |c| {
        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'%')
    });
    // `redis://:password@host` has no user.
    if b.get(user_end) != Some(&b':') {
        return None;
    }
    let pass_start = user_end + 1;
    let pass_end = run_end(b, pass_start, |c| {
        !c.is_ascii_whitespace() && !matches!(c, b'@' | b'/' | b'"' | b'\'')
    });
    (b.get(pass_end) == Some(&b'@') && pass_end > pass_start).then_some((
        pass_start,
        pass_end,
        "url-credentials",
    ))
}

/// Whether `name` (lower case, dashes as underscores) names a secret, and
/// whether a password (`Some(true)`: shorter values and passphrases count).
fn secret_name(name: &str) -> Option<bool> {
    if name.is_empty() {
        return None;
    }
    if PASSWORD_NAMES.iter().any(|s| name.ends_with(s)) {
        return Some(true);
    }
    (SECRET_NAMES.iter().any(|s| name.ends_with(s)) || EXACT_SECRET_NAMES.contains(&name))
        .then_some(false)
}

/// Whether a quoted value is code rather than a literal: a template
/// (`${x}`, `{x}`, `%s`, `<pw>`), a variable (`$PW`) or a call
/// (`os.getenv("PW")`). Other punctuation is a secret's (Django keys hold `$%&#()`).
fn is_template(value: &[u8]) -> bool {
    let text = String::from_utf8_lossy(value);
    let call = value.iter().enumerate().any(|(k, &c)| {
        c == b'(' && k >= 2 && {
            let name = value.get(..k).unwrap_or(&[]);
            let ident = name
                .iter()
                .rev()
                .take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
                .count();
            ident == k || ident >= 3
        }
    });
    value.first() == Some(&b'$')
        || value
            .iter()
            .any(|c| matches!(c, b'{' | b'}' | b'<' | b'>' | b'[' | b']'))
        || ["$(", "%(", "%s", "()"].iter().any(|t| text.contains(t))
        || call
}

/// Whether a value with spaces reads as a passphrase, not prose or code:
/// a few words, none of [`PROSE_WORDS`], no sentence end.
fn is_passphrase(value: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(value) else {
        return false;
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    words.len() <= MAX_PASSPHRASE_WORDS
        && !words.iter().any(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            PROSE_WORDS.iter().any(|p| p.eq_ignore_ascii_case(w))
        })
        && !text.ends_with(['.', ':', '?'])
        && !value
            .iter()
            .any(|c| matches!(c, b'=' | b'"' | b'\'' | b'|' | b'(' | b')' | b'`'))
}

/// Whether only indentation, `export ` or a YAML `- ` stands on the line before `j`.
fn starts_line(b: &[u8], j: usize) -> bool {
    let line_start = b
        .get(..j)
        .and_then(|s| s.iter().rposition(|&c| c == b'\n'))
        .map_or(0, |p| p + 1);
    let before = b.get(line_start..j).unwrap_or(&[]);
    let before = before.trim_ascii_start();
    before.is_empty() || before == b"export " || before == b"- "
}

/// `NAME = value` / `NAME: value` where NAME ends with a secret name and value
/// is a literal. A password's value may hold spaces when quoted, or when the
/// assignment has its line to itself (`.env`, YAML): `PASSWORD=open sesame 42`.
fn secret_assignment(b: &[u8], op: usize) -> Option<(usize, usize, &'static str)> {
    // Name: identifier chars right before the operator (spaces and a closing quote allowed).
    let mut j = op;
    while j > 0 && matches!(b.get(j - 1), Some(b' ') | Some(b'"') | Some(b'\'')) {
        j -= 1;
    }
    let name_end = j;
    while j > 0
        && b.get(j - 1)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
    {
        j -= 1;
    }
    // `x-api-key`, `--password`: dashes count as underscores.
    let name = std::str::from_utf8(b.get(j..name_end)?)
        .ok()?
        .to_ascii_lowercase()
        .replace('-', "_");
    let password = secret_name(name.trim_start_matches('_'))?;
    // `==`, `=>`, `:=` in code are comparisons or declarations of expressions.
    if matches!(b.get(op + 1), Some(b'=') | Some(b'>'))
        || (op > 0
            && matches!(
                b.get(op - 1),
                Some(b'=') | Some(b'!') | Some(b'<') | Some(b'>')
            ))
    {
        return None;
    }
    let mut k = op + 1;
    while matches!(b.get(k), Some(b' ') | Some(b'\t')) {
        k += 1;
    }
    let quote = match b.get(k) {
        Some(&q @ (b'"' | b'\'')) => {
            k += 1;
            Some(q)
        }
        _ => None,
    };
    let start = k;
    let mut end = match quote {
        Some(q) => run_end(b, k, |c| c != q && c != b'\n'),
        None => run_end(b, k, |c| {
            !c.is_ascii_whitespace() && !matches!(c, b',' | b';' | b'"' | b'\'')
        }),
    };
    if password && quote.is_none() && matches!(b.get(end), Some(b' ' | b'\t')) && starts_line(b, j)
    {
        // The rest of the line, up to a ` #` comment.
        let line_end = run_end(b, end, |c| c != b'\n' && c != b'\r');
        let line = b.get(start..line_end)?;
        let comment = line.windows(2).position(|w| w == b" #");
        let rest = line.get(..comment.unwrap_or(line.len()))?.trim_ascii_end();
        if is_passphrase(rest) {
            end = start + rest.len();
        }
    }
    let value = b.get(start..end)?;
    let has_code = match quote {
        Some(_) => is_template(value),
        None => value.iter().any(|c| {
            matches!(
                c,
                b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>' | b'$' | b'%'
            )
        }),
    };
    // Unquoted, a word like `settings.SECRET_KEY` is an expression; quoted, a literal.
    let identifier = value
        .iter()
        .all(|c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'.'));
    let min = if password { 4 } else { 8 };
    let placeholder = std::str::from_utf8(value)
        .is_ok_and(|v| NOT_PASSWORDS.iter().any(|w| v.eq_ignore_ascii_case(w)));
    let spaced = value.contains(&b' ') && !(password && is_passphrase(value));
    if value.len() < min || has_code || (identifier && quote.is_none()) || placeholder || spaced {
        return None;
    }
    Some((start, end, "secret-assignment"))
}

/// `--password <value>` (also `--pass`, `--db-password`, `--token`,
/// `--api-key`…): a secret flag's value after a space (`--password=` is an
/// assignment). Usage lines' metavars (`--password PASSWORD`) are not secrets.
fn password_flag(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    if !b.get(i..)?.starts_with(b"--") {
        return None;
    }
    let name_end = run_end(b, i + 2, |c| {
        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-')
    });
    if b.get(name_end) != Some(&b' ') {
        return None;
    }
    let name = std::str::from_utf8(b.get(i + 2..name_end)?)
        .ok()?
        .to_ascii_lowercase()
        .replace('-', "_");
    // `PASS: test_x` in test logs is not a secret, `--pass pw` is.
    let password = if name == "pass" {
        true
    } else {
        secret_name(&name)?
    };
    let mut k = name_end + 1;
    let quote = match b.get(k) {
        Some(&q @ (b'"' | b'\'')) => {
            k += 1;
            Some(q)
        }
        _ => None,
    };
    let end = match quote {
        Some(q) => run_end(b, k, |c| c != q && c != b'\n'),
        None => run_end(b, k, |c| {
            !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\'')
        }),
    };
    let value = b.get(k..end)?;
    let metavar = value
        .iter()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-'));
    let placeholder = std::str::from_utf8(value)
        .is_ok_and(|v| NOT_PASSWORDS.iter().any(|w| v.eq_ignore_ascii_case(w)));
    let spaced = value.contains(&b' ') && !is_passphrase(value);
    let min = if password { 4 } else { 8 };
    let usable = value.len() >= min
        && !metavar
        && !placeholder
        && !spaced
        && value.first().is_some_and(|&c| c != b'-')
        && !is_template(value);
    usable.then_some((k, end, "password-flag"))
}

/// A Discord bot token: `<user id in base64>.<6-7>.<27-38>` (the id starts
/// with `M`, `N` or `O`, 23-28 characters).
fn discord_token(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    if !matches!(b.get(i), Some(b'M' | b'N' | b'O')) {
        return None;
    }
    let b64 = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    let e1 = run_end(b, i, b64);
    if !(23..=28).contains(&(e1 - i)) || b.get(e1) != Some(&b'.') {
        return None;
    }
    let e2 = run_end(b, e1 + 1, b64);
    if !(6..=7).contains(&(e2 - e1 - 1)) || b.get(e2) != Some(&b'.') {
        return None;
    }
    let e3 = run_end(b, e2 + 1, b64);
    let id = b.get(i..e1)?;
    let mixed = id.iter().any(u8::is_ascii_digit) && id.iter().any(u8::is_ascii_lowercase);
    ((27..=38).contains(&(e3 - e2 - 1)) && mixed && !b.get(e3).is_some_and(|&c| c == b'.'))
        .then_some((i, e3, "discord-token"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan before it skipped words (every byte tested): what
    /// [`find_secrets`] must keep finding.
    fn find_secrets_reference(
        text: &str,
        found: &mut Redactions,
    ) -> Vec<(usize, usize, &'static str)> {
        let b = text.as_bytes();
        let mut spans: Vec<(usize, usize, &'static str)> = Vec::new();
        private_key_blocks(text, &mut spans);
        let mut i = 0;
        while i < b.len() {
            if spans.iter().any(|&(s, e, _)| i >= s && i < e) {
                i += 1;
                continue;
            }
            let at_boundary = i == 0 || !is_token_byte(b.get(i - 1).copied().unwrap_or(b' '));
            if at_boundary {
                if let Some(span) = word_secret(b, i) {
                    i = span.1;
                    spans.push(span);
                    continue;
                }
            }
            if b.get(i) == Some(&b':') && b.get(i + 1) == Some(&b'/') && b.get(i + 2) == Some(&b'/')
            {
                if let Some(span) = url_password(b, i + 3) {
                    spans.push(span);
                    i = span.1;
                    continue;
                }
            }
            if matches!(b.get(i), Some(b'=') | Some(b':')) {
                if let Some(span) = secret_assignment(b, i) {
                    spans.push(span);
                    i = span.1;
                    continue;
                }
            }
            i += 1;
        }
        clean_spans(text, spans, found)
    }

    #[test]
    fn find_secrets_agrees_with_the_reference() {
        // Pieces of every detector (prefixes, names, separators, block
        // markers) and of the words around them, joined by a fixed LCG.
        let pieces = [
            "sk-",
            "sk-ant-",
            "ghp_",
            "AKIA",
            "SG.",
            "eyJ",
            "hooks.slack.com/services/",
            "authorization",
            "Authorization: Bearer ",
            " -p",
            "mysql ",
            "://",
            "user:",
            "@",
            "password",
            "api_key",
            "token",
            "=",
            ":",
            "==",
            " ",
            "\n",
            "\t",
            "\"",
            "'",
            ",",
            "/",
            "+",
            "-",
            "_",
            ".",
            "a1B2c3D4e5F6g7H8",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "0123456789",
            "abcdefghij",
            "XYZ",
            "é",
            "$",
            "{x}",
            "-----BEGIN RSA PRIVATE KEY-----\n",
            "-----END RSA PRIVATE KEY-----",
            "-----BEGIN CERT-----\n",
            "[REDACTED:x]",
            "whsec_",
            "hvs.",
            "dop_v1_",
            "--password ",
            "--pass ",
            "auth",
            "MTA4NzY1NDMyMTA5ODc2NTQzMg",
            ".GhT4kL.",
            "hooks.slack.com/workflows/",
            "\\n",
            "$%&#",
            "export ",
            "os.getenv(",
        ];
        let mut seed: u64 = 11;
        let mut cases = 0;
        for len in [1, 2, 3, 5, 8, 13, 24, 40] {
            for _ in 0..1500 {
                let mut c = String::new();
                for _ in 0..len {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    c.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
                }
                let (mut a, mut b) = (Redactions::default(), Redactions::default());
                assert_eq!(
                    find_secrets(&c, &mut a),
                    find_secrets_reference(&c, &mut b),
                    "{c:?}"
                );
                assert_eq!(a, b, "{c:?}");
                cases += 1;
            }
        }
        assert_eq!(cases, 12_000);
    }

    /// Realistic fake secrets (none is a live credential).
    const CORPUS: &[(&str, &str)] = &[
        ("OPENAI_API_KEY=sk-proj-4fQ2b9XwLm8Zt0aP3kR7sVn1Yc6Ue5Jh", "sk-proj-4fQ2"),
        ("key: sk-ant-api03-Zx9Lw2Qm4Rt6Yu8Io0Pa1Sd3Fg5Hj7Kl", "sk-ant-api03"),
        ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
        ("token ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R", "ghp_1a2B"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123", "github_pat_11"),
        ("CI_TOKEN=glpat-xY7zK2mN9pQ4rS6tU8vW", "glpat-xY7z"),
        ("slack: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-1234"),
        ("STRIPE=sk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "sk_live_51H8"),
        ("maps AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD"),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJhbGciOiJIUzI1NiJ9"),
        ("DATABASE_URL=postgres://admin:S3cr3tPassw0rd@db.internal:5432/app", "S3cr3tPassw0rd"),
        ("PASSWORD=hunter2hunter2", "hunter2hunter2"),
        ("export DB_PASSWORD='p@ssW0rd!2024'", "p@ssW0rd!2024"),
        ("\"client_secret\": \"9f8e7d6c5b4a39281706f5e4d3c2b1a0\"", "9f8e7d6c5b4a"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HkR\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXkt"),
    ];

    /// The twelve kinds issue 16 found passing (fakes: none is a live credential).
    const GAPS: &[(&str, &str)] = &[
        ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
        ("AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "bPxRfiCY"),
        ("aws_secret = \"Zq3x9Lm2Np8Rt4Vw6Yb1Cd5Fg7Hj0Kl2Mn4Pq6Rs8\"", "Zq3x9Lm2"),
        ("curl -X POST https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX", "aBcDeFgHiJkLmNoPqRsTuVwX"),
        ("SENDGRID=SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZaBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgHiJkLm", "wXyZaBcDeF"),
        ("sg = SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZaBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgHiJkLm", "aBcDeFgHiJkLmNoPqRsTuV"),
        ("curl -H 'Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543abc'", "8f14e45fceea"),
        ("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l"),
        ("authorization: token Zx9Lw2Qm4Rt6Yu8Io0Pa", "Zx9Lw2Qm4Rt6"),
        ("x-api-key: 3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e", "3f9a1c7e5b2d"),
        ("-H \"X-API-Key: qwertyuiopasdfgh12\"", "qwertyuiopasdfgh12"),
        ("REDIS_URL=redis://:s3cretRedisPw@cache.internal:6379/0", "s3cretRedisPw"),
        ("amqp://guest:guest-Pw-42@rabbit:5672/", "guest-Pw-42"),
        ("database:\n  user: app\n  password: hunter2\n", "hunter2"),
        ("  password: \"CorrectHorseBatteryStaple\"", "CorrectHorse"),
        ("mysql -u root -pS3cretDbPw -h db", "S3cretDbPw"),
        ("mysqldump --user=root -pTopSecret99 app > dump.sql", "TopSecret99"),
        ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbA==;EndpointSuffix=core.windows.net", "Zm9vYmFyYmF6"),
        ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Zm9vYmFyYmF6cXV4MTIz+/NDU2Nzg5=", "Zm9vYmFyYmF6cXV4"),
        ("TWILIO_AUTH_TOKEN=9c1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a", "9c1e2f3a4b5c"),
        ("export TWILIO_AUTH_TOKEN=\"abcdefabcdefabcdefabcdefabcdefab\"", "abcdefabcdef"),
        ("  \"private_key_id\": \"4f8e2a9c1b7d3e5f6a0c8b2d4e6f8a1c3b5d7e9f\",", "4f8e2a9c1b7d"),
    ];

    #[test]
    fn the_gaps_issue_16_found_are_masked() {
        for (text, secret) in GAPS {
            let (out, found) = redact(text);
            assert!(!out.contains(secret), "{text:?} → {out:?}");
            assert!(found.count >= 1, "{text:?}");
        }
    }

    #[test]
    fn every_fake_secret_in_the_corpus_is_masked() {
        for (text, secret) in CORPUS {
            let (out, found) = redact(text);
            assert!(!out.contains(secret), "{text:?} → {out:?}");
            assert!(found.count >= 1, "{text:?}");
            assert!(out.contains("[REDACTED:"), "{out}");
        }
    }

    #[test]
    fn ordinary_code_and_output_is_left_alone() {
        let clean = [
            "password = request.POST['password']",
            "if token == expected_token:",
            "def get_secret_key(self):",
            "SECRET_KEY = settings.SECRET_KEY",
            "password: str",
            "pip install scikit-learn-intelex",
            "token_count = len(tokens)",
            "url = 'https://example.com:8080/path'",
            "AKIA is a prefix",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            // git SHAs (40 hex), base64 in code, headers without credentials.
            "commit 4f8e2a9c1b7d3e5f6a0c8b2d4e6f8a1c3b5d7e9f",
            "HEAD is now at 4f8e2a9c1b7d3e5f6a0c8b2d4e6f8a1c3b5d7e9f Fix the parser",
            "sha1: 4f8e2a9c1b7d3e5f6a0c8b2d4e6f8a1c3b5d7e9f",
            "headers = {'Authorization': f'Bearer {token}'}",
            "-H \"Authorization: Bearer $OPENAI_API_KEY\"",
            "self.assertEqual(response['Authorization'], 'Basic')",
            "mysql -u root -p",
            "pip install -p 3.11 numpy",
            "password: str = None",
            "client.login(username='admin', password='password')",
            "settings.configure(SECRET_KEY='secret', DEBUG=True)",
            "password: Optional[str]",
            "  password: null",
            "path: django/contrib/auth/hashers/PBKDF2PasswordHasherTest.py",
            "test_multiple_inheritance_with_abstract_models_keeps_fields",
            "https://hooks.slack.com/services/",
        ];
        for text in clean {
            let (out, found) = redact(text);
            assert_eq!(out, text, "{found:?}");
        }
    }

    #[test]
    fn non_ascii_text_never_splits_a_character() {
        let text = "пароль=секретный✓ password=ünïcödé✓✓✓✓ sk-ÄÖÜ";
        let (out, _) = redact(text);
        assert!(out.is_char_boundary(out.len()));
        let (empty, found) = redact("");
        assert_eq!(empty, "");
        assert_eq!(found.count, 0);
    }
}
