//! [`LiteralSet`]: finds where any of several literals occurs in one pass,
//! ignoring ASCII case (the regex dialect folds ASCII case only).
//!
//! Each literal is anchored at its rarest byte pair (by a rough frequency
//! rank of bytes in logs and code); a 64 Kbit table of anchor pairs is tested
//! at every position and only hits are compared in full. One pass over the
//! text replaces one `memmem` pass per literal, which matters in wasm where
//! `memmem` has no SIMD. Case is ignored by folding each byte of the anchor
//! pair to lowercase (a compare and an or per byte) and comparing hits
//! with `eq_ignore_ascii_case`.

/// A set of literals of at least 2 bytes each, matched ignoring ASCII case.
#[derive(Debug, Clone)]
pub struct LiteralSet {
    table: Box<[u64; 1024]>,
    /// `(folded pair, offset of the pair in the literal, folded literal)`, sorted by pair.
    entries: Vec<(u16, usize, Vec<u8>)>,
}

#[inline]
fn fold(b: u8) -> u16 {
    u16::from(b.to_ascii_lowercase())
}

/// Rough commonness of a byte in logs and code (higher = more common).
fn rank(b: u8) -> u32 {
    match b {
        b' ' | b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 9,
        b'a'..=b'z' | b'\n' => 6,
        b'0'..=b'9' | b'_' | b'.' | b'/' => 5,
        b'(' | b')' | b',' | b'=' | b'-' | b'"' | b'\'' => 4,
        b'A'..=b'Z' => 3,
        _ => 2,
    }
}

impl LiteralSet {
    /// The set of `literals`; `None` if one is shorter than 2 bytes.
    pub fn new<'a>(literals: impl IntoIterator<Item = &'a [u8]>) -> Option<Self> {
        let mut table = Box::new([0u64; 1024]);
        let mut entries = Vec::new();
        for lit in literals {
            let lit = lit.to_ascii_lowercase();
            let (offset, pair) = lit
                .windows(2)
                .enumerate()
                .filter_map(|(i, w)| Some((i, [*w.first()?, *w.get(1)?])))
                .min_by_key(|(_, [a, b])| rank(*a) + rank(*b))?;
            let pair = u16::from_be_bytes(pair);
            set(&mut table, pair);
            entries.push((pair, offset, lit));
        }
        entries.sort_by_key(|e| e.0);
        Some(Self { table, entries })
    }

    /// Whether `pair` is an anchor (the index is always in bounds).
    #[inline]
    fn has(&self, pair: u16) -> bool {
        self.table
            .get(usize::from(pair >> 6))
            .is_some_and(|w| (w >> (pair & 63)) & 1 != 0)
    }

    /// Calls `hit(start)` for each position in `from..to` where a literal
    /// (ignoring ASCII case) starts and lies wholly within `from..to`, in order; `hit` returns where
    /// to resume (at least `start + 1`), or `None` to stop.
    pub fn scan(
        &self,
        bytes: &[u8],
        from: usize,
        to: usize,
        mut hit: impl FnMut(usize) -> Option<usize>,
    ) {
        let to = to.min(bytes.len());
        let mut i = from;
        while i.saturating_add(1) < to {
            let Some(window) = bytes.get(i..to) else {
                return;
            };
            // Find the next position whose pair is in the table (the hot loop:
            // one table probe per byte, the index is always in bounds).
            let mut found = None;
            let mut prev = fold(window.first().copied().unwrap_or(0));
            for (k, &b) in window.iter().enumerate().skip(1) {
                let b = fold(b);
                let pair = (prev << 8) | b;
                if self.has(pair) {
                    found = Some((i + k - 1, pair));
                    break;
                }
                prev = b;
            }
            let Some((at, pair)) = found else {
                return;
            };
            let mut resume = at + 1;
            let first = self.entries.partition_point(|e| e.0 < pair);
            for (_, offset, lit) in self.entries.iter().skip(first).take_while(|e| e.0 == pair) {
                let Some(start) = at.checked_sub(*offset) else {
                    continue;
                };
                if start >= from
                    && start + lit.len() <= to
                    && bytes
                        .get(start..start + lit.len())
                        .is_some_and(|b| b.eq_ignore_ascii_case(lit))
                {
                    match hit(start) {
                        Some(next) => resume = resume.max(next),
                        None => return,
                    }
                    break;
                }
            }
            i = resume;
        }
    }
}

fn set(table: &mut [u64; 1024], pair: u16) {
    if let Some(word) = table.get_mut(usize::from(pair >> 6)) {
        *word |= 1 << (pair & 63);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_literal_in_order() {
        let lits: [&[u8]; 3] = [b"Error", b"exit code ", b"FAILED"];
        let set = LiteralSet::new(lits).unwrap();
        let text = b"ok\nan ERROR here\nexit code 1\nall failed\nError";
        let mut hits = Vec::new();
        set.scan(text, 0, text.len(), |at| {
            hits.push(at);
            Some(at + 1)
        });
        let want: Vec<usize> = [6, 17, 33, 40].to_vec();
        assert_eq!(hits, want);
        // A literal cut by the end of the range is not reported.
        let mut n = 0;
        set.scan(text, 0, text.len() - 1, |_| {
            n += 1;
            Some(usize::MAX)
        });
        assert_eq!(n, 1);
        assert!(LiteralSet::new([b"x".as_slice()]).is_none());
    }
}
