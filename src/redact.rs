//! Secret redaction: masks common credentials before text reaches the model
//! (excerpts, snapshots, summaries). The original stays only in the spill store.
//!
//! Detectors are hand-written scanners (no regex engine in the core): provider API
//! keys, AWS access key ids, GitHub/GitLab/Slack/Stripe/Google tokens, private key
//! blocks, JWTs, `PASSWORD=`/`SECRET=`-style assignments and URLs with credentials.

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
fn find_secrets(text: &str, found: &mut Redactions) -> Vec<(usize, usize, &'static str)> {
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
            if let Some(span) = prefixed_token(b, i)
                .or_else(|| aws_key_id(b, i))
                .or_else(|| jwt(b, i))
            {
                i = span.1;
                spans.push(span);
                continue;
            }
        }
        if b.get(i) == Some(&b':') && b.get(i + 1) == Some(&b'/') && b.get(i + 2) == Some(&b'/') {
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
        let Some(header_end) = text
            .get(start..)
            .and_then(|t| t.find("-----\n").or_else(|| t.find("-----\r")))
        else {
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
    if b.get(user_end) != Some(&b':') || user_end == start {
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

/// `NAME = value` / `NAME: value` where NAME ends with a secret name and value is a literal.
fn secret_assignment(b: &[u8], op: usize) -> Option<(usize, usize, &'static str)> {
    // Name: identifier chars right before the operator (spaces and a closing quote allowed).
    let mut j = op;
    while j > 0 && matches!(b.get(j - 1), Some(b' ') | Some(b'"') | Some(b'\'')) {
        j -= 1;
    }
    let name_end = j;
    while j > 0
        && b.get(j - 1)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
    {
        j -= 1;
    }
    let name = std::str::from_utf8(b.get(j..name_end)?)
        .ok()?
        .to_ascii_lowercase();
    if name.is_empty() || !SECRET_NAMES.iter().any(|s| name.ends_with(s)) {
        return None;
    }
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
    let end = match quote {
        Some(q) => run_end(b, k, |c| c != q && c != b'\n'),
        None => run_end(b, k, |c| {
            !c.is_ascii_whitespace() && !matches!(c, b',' | b';' | b'"' | b'\'')
        }),
    };
    let value = b.get(start..end)?;
    let looks_like_code = value.iter().any(|c| {
        matches!(
            c,
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>' | b'$' | b'%'
        )
    }) || value
        .iter()
        .all(|c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'.'));
    if value.len() < 8 || looks_like_code || value.contains(&b' ') {
        return None;
    }
    Some((start, end, "secret-assignment"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
