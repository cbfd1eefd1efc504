//! Stage 2, cross-observation line dedup.
//!
//! When an observation (tool result) arrives, the lines it repeats are removed
//! from the earlier observations still inside the recent window, so each line
//! is kept once, in its newest copy. Only lines whose trimmed length exceeds
//! `dedup.minLineChars` count; the newest observation, tool calls and the
//! outputs of tools `excludeTools` names are never touched; lines holding a
//! `spill://` pointer are never removed.
//!
//! The rule is a pure function of the history, which keeps it stable across
//! turns: observation `i` loses the lines that reappear in observations
//! `i+1 ..= i+window-1` (the ones that shared the window with it). Once an
//! observation has left the window its text never changes again, so only the
//! last `window - 1` observations can differ between turn t and turn t+1 and
//! the prompt prefix before them stays byte-identical.
//!
//! With `dedup.batched` (the default) the rule sees only the observations
//! the last batch settled ([`crate::stage::Schedule::settled`]): the ones that
//! arrived since wait for the next batch, when snapshots change the prefix
//! anyway. Between batches the prompt prefix stays byte-identical, which
//! for providers that bill cache writes (Anthropic) is worth more than
//! removing the lines a few turns earlier. The exception is the first
//! `window` observations: nothing has left the window yet, all of them are
//! settled, so while the window fills (turns 2 ..= `window`) each arrival
//! thins the earlier ones at once and the prefix changes on those turns.
//!
//! Each edited observation ends with one marker,
//! `[N duplicate lines removed; they appear in step t; original: spill://…]`,
//! and the original text is kept in the spill store under that pointer.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::error::Result;
use crate::model::{Conversation, Part, PartKind, PartRef, ToolResult};
use crate::stage::{Stage, StageContext, StageName};
use crate::store;

/// The dedup stage.
#[derive(Debug, Default)]
pub struct Dedup;

impl Stage for Dedup {
    type State = DedupCache;

    fn name(&self) -> StageName {
        StageName::Dedup
    }

    fn enabled(&self, cx: &StageContext<'_, DedupCache>) -> bool {
        cx.config.dedup.enabled
    }

    fn scheduled(&self) -> bool {
        true
    }

    fn apply(&self, conv: &mut Conversation, cx: &mut StageContext<'_, DedupCache>) -> Result<()> {
        let window = cx.config.window;
        let config = cx.config;
        let rule = Eligibility {
            min_chars: config.dedup.min_line_chars,
            pointer_root: &config.spill.pointer_root,
        };
        let mut observations = conv.observations();
        if cx.config.dedup.batched {
            // Observations that arrived since the last batch neither lose
            // lines nor take them from earlier ones until the next batch.
            observations.truncate(cx.schedule(observations.len()).settled(observations.len()));
        }
        if window < 2 || observations.len() < 2 {
            return Ok(());
        }
        // The texts' digests, shared with the activity cache (the same
        // tool results): each text is hashed and held once.
        let digests = cx.activities.digests();
        let thinnings = thinnings(conv, &observations, window, rule, cx.state, digests);
        // Outputs of excluded tools lose no line (their own lines still
        // count as the newer copies of the earlier outputs' lines).
        let excluded = crate::stage::excluded_results(conv, config);
        for thinning in thinnings.into_iter().filter(|p| !excluded.contains(&p.at)) {
            apply_thinning(conv, cx, thinning)?;
        }
        Ok(())
    }
}

/// A fast, fixed (deterministic) hasher for lines: rotate-xor-multiply over
/// 8-byte words. Lines are not attacker-chosen keys of a long-lived table, so
/// SipHash's flood resistance buys nothing here and costs ~3x.
#[derive(Default)]
struct LineHasher(u64);

impl Hasher for LineHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.mix(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        }
        let tail = words
            .remainder()
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        self.mix(tail);
    }

    fn write_u8(&mut self, b: u8) {
        self.mix(u64::from(b));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl LineHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// The lines of one observation that dedup may match.
type LineSet<'a> = HashSet<&'a str, BuildHasherDefault<LineHasher>>;

/// What dedup will do to one observation.
#[derive(Debug, Clone)]
struct Thinning {
    /// Where the observation is.
    at: PartRef,
    /// New text per part (`None`: the part is not text and stays as is).
    texts: Vec<Option<String>>,
    /// Lines removed.
    removed: usize,
    /// The removed lines, concatenated (to price them).
    removed_text: String,
    /// Steps (1-based) whose observations hold the removed lines.
    steps: BTreeSet<usize>,
    /// Whether some removed line belongs to an observation without a step number.
    unnumbered: bool,
}

/// Thinnings already decided, by the settings' digest and the digests (the
/// first 128 bits of a SHA-256) of an observation's texts and of the later
/// ones in its window, with their step numbers ([`WindowKey`]): a cache only,
/// so an observation is read again only when its window changed. Shared by
/// every session of a state, so keyed by digests no chosen text can share
/// with another's (each text's digest remembered by the activity cache,
/// [`crate::activity::ActivityCache::digests`]), compared whole. Starts over
/// past 16 MiB of thinned texts.
#[derive(Debug, Default)]
pub struct DedupCache {
    entries: HashMap<WindowKey, Option<Thinning>>,
    bytes: usize,
    /// Observations decided (not found in the cache).
    pub decided: u64,
}

impl DedupCache {
    fn insert(&mut self, key: WindowKey, thinning: Option<Thinning>) {
        let size = thinning.as_ref().map_or(0, |t| {
            t.removed_text.len() + t.texts.iter().flatten().map(String::len).sum::<usize>()
        });
        if self.bytes + size > 16 << 20 || self.entries.len() >= 100_000 {
            self.entries.clear();
            self.bytes = 0;
        }
        self.bytes += size;
        self.entries.insert(key, thinning);
    }
}

/// What a [`DedupCache`] finds a decision by: the settings' digest, then
/// each observation of the window as its number of parts and each part's
/// digest (`u128::MAX` for a part that is not text; `u128::MAX` alone for a
/// missing result), the later ones followed by their step (`u128::MAX` for none).
type WindowKey = Box<[u128]>;

/// The number of parts of `result` and the digest of each (`u128::MAX` for
/// a part that is not text).
fn content_digests(result: &ToolResult, digests: &mut crate::hash::Digests) -> Vec<u128> {
    let mut out = Vec::with_capacity(1 + result.parts.len());
    out.push(result.parts.len() as u128);
    out.extend(
        result
            .parts
            .iter()
            .map(|p| p.as_text().map_or(u128::MAX, |t| digests.of(t))),
    );
    out
}

/// Decides, for every observation, which lines go. Reads only; owns its output.
fn thinnings(
    conv: &Conversation,
    observations: &[PartRef],
    window: usize,
    rule: Eligibility<'_>,
    cache: &mut DedupCache,
    digests: &mut crate::hash::Digests,
) -> Vec<Thinning> {
    let step_of: HashMap<PartRef, usize> = conv
        .steps()
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.result_at.map(|at| (at, i + 1)))
        .collect();
    let results: Vec<Option<&ToolResult>> = observations
        .iter()
        .map(|at| conv.tool_result(*at))
        .collect();
    let digests: Vec<Vec<u128>> = results
        .iter()
        .map(|r| r.map_or_else(|| vec![u128::MAX], |r| content_digests(r, digests)))
        .collect();
    let fingerprint = crate::hash::digest128(&[&rule.fingerprint()]);
    let step = |j: usize| observations.get(j).and_then(|a| step_of.get(a)).copied();
    // Built only for the windows not decided before.
    let mut sets: Vec<Option<LineSet<'_>>> = vec![None; results.len()];
    let mut out = Vec::new();
    for (i, (at, result)) in observations.iter().zip(&results).enumerate() {
        let Some(result) = result else { continue };
        let end = (i + window - 1).min(observations.len() - 1);
        // The settings, then each observation of the window with its step.
        let mut key = vec![fingerprint];
        for j in i..=end {
            key.extend(digests.get(j).into_iter().flatten());
            if j > i {
                key.push(step(j).map_or(u128::MAX, |s| s as u128));
            }
        }
        let key = key.into_boxed_slice();
        if let Some(decided) = cache.entries.get(&key) {
            if let Some(thinning) = decided {
                out.push(Thinning {
                    at: *at,
                    ..thinning.clone()
                });
            }
            continue;
        }
        cache.decided += 1;
        for j in i + 1..=end {
            if let Some(slot @ None) = sets.get_mut(j) {
                let set = results.get(j).copied().flatten();
                *slot = Some(set.map(|r| line_set(r, rule)).unwrap_or_default());
            }
        }
        let later: Vec<(Option<usize>, &LineSet<'_>)> = (i + 1..=end)
            .filter_map(|j| {
                let set = sets.get(j)?.as_ref()?;
                (!set.is_empty()).then_some((step(j), set))
            })
            .collect();
        let thinning = if later.is_empty() {
            None
        } else {
            thin(*at, result, &later, rule)
        };
        cache.insert(key, thinning.clone());
        out.extend(thinning);
    }
    out
}

/// The lines of `result` that dedup may match (trimmed, long enough, no pointer).
fn line_set<'t>(result: &'t ToolResult, rule: Eligibility<'_>) -> LineSet<'t> {
    result
        .parts
        .iter()
        .filter_map(Part::as_text)
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|t| rule.eligible(t))
        .collect()
}

/// Which lines dedup may match: longer than `min_chars` (`dedup.minLineChars`)
/// and holding no pointer (`spill://`, or a path under `spill.pointerRoot`).
#[derive(Debug, Clone, Copy)]
struct Eligibility<'a> {
    min_chars: usize,
    pointer_root: &'a str,
}

impl Eligibility<'_> {
    fn eligible(self, trimmed: &str) -> bool {
        trimmed.len() > self.min_chars
            && (trimmed.is_ascii() || trimmed.chars().count() > self.min_chars)
            && !trimmed.contains(store::SCHEME)
            && (self.pointer_root.is_empty() || !trimmed.contains(self.pointer_root))
    }

    /// What the decisions depend on, for the dedup cache's keys.
    fn fingerprint(self) -> Vec<u8> {
        let mut out = (self.min_chars as u64).to_le_bytes().to_vec();
        out.extend_from_slice(self.pointer_root.as_bytes());
        out
    }
}

/// Removes from `result` the lines found in `later` (each attributed to the
/// first later observation holding it).
fn thin(
    at: PartRef,
    result: &ToolResult,
    later: &[(Option<usize>, &LineSet<'_>)],
    rule: Eligibility<'_>,
) -> Option<Thinning> {
    let mut texts = Vec::with_capacity(result.parts.len());
    let mut removed = 0;
    let mut removed_text = String::new();
    let mut steps = BTreeSet::new();
    let mut unnumbered = false;
    for part in &result.parts {
        let Some(text) = part.as_text() else {
            texts.push(None);
            continue;
        };
        let mut kept = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let trimmed = line.trim();
            let found = if rule.eligible(trimmed) {
                later.iter().find(|(_, set)| set.contains(trimmed))
            } else {
                None
            };
            match found {
                Some((step, _)) => {
                    removed += 1;
                    removed_text.push_str(line);
                    match step {
                        Some(s) => {
                            steps.insert(*s);
                        }
                        None => unnumbered = true,
                    }
                }
                None => kept.push_str(line),
            }
        }
        texts.push(Some(kept));
    }
    (removed > 0).then_some(Thinning {
        at,
        texts,
        removed,
        removed_text,
        steps,
        unnumbered,
    })
}

/// The marker closing a thinned observation.
pub fn marker(removed: usize, steps: &BTreeSet<usize>, unnumbered: bool, pointer: &str) -> String {
    let lines = if removed == 1 { "line" } else { "lines" };
    let (verb, pronoun) = if removed == 1 {
        ("appears", "it")
    } else {
        ("appear", "they")
    };
    let place = match (steps.len(), unnumbered) {
        (0, _) => "a later tool result".to_string(),
        (1, false) => format!("step {}", steps.iter().next().copied().unwrap_or_default()),
        _ => {
            let mut names: Vec<String> = steps.iter().map(usize::to_string).collect();
            if unnumbered {
                names.push("a later tool result".into());
            }
            let last = names.pop().unwrap_or_default();
            if names.is_empty() {
                format!("step {last}")
            } else {
                format!("steps {} and {last}", names.join(", "))
            }
        }
    };
    format!(
        "[{removed} duplicate {lines} removed; {pronoun} {verb} in {place}; original: {pointer}]"
    )
}

/// Applies a thinning when the marker costs fewer tokens than the lines it
/// replaces. The change is priced on the affected content only (removed lines
/// before, marker after), so an observation is never tokenized whole.
fn apply_thinning(
    conv: &mut Conversation,
    cx: &mut StageContext<'_, DedupCache>,
    thinning: Thinning,
) -> Result<()> {
    let Some(result) = conv.tool_result(thinning.at) else {
        return Ok(());
    };
    // Price the marker with a pointer of the final shape before storing
    // anything; the real pointer is priced again below (markers are short).
    let placeholder = cx.config.pointer("dedup-0f0f0f0f0f0f0f0f");
    let before = cx.meter.text(&thinning.removed_text)?;
    if cx.meter.text(&marker_line(&thinning, &placeholder))? >= before {
        return Ok(());
    }
    let original = result.text();
    let pointer = match cx.keep("dedup", &original) {
        Ok(p) => p,
        Err(e) => {
            cx.notes.push(format!(
                "message {}: kept verbatim ({e})",
                thinning.at.message
            ));
            return Ok(());
        }
    };
    let after = cx.meter.text(&marker_line(&thinning, &pointer))?;
    if after >= before {
        return Ok(());
    }
    let thinned = rebuild(result, &thinning, &pointer);
    let detail = format!(
        "{} lines; kept in step{} {}",
        thinning.removed,
        if thinning.steps.len() == 1 { "" } else { "s" },
        thinning
            .steps
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    if let Some(slot) = conv.tool_result_mut(thinning.at) {
        *slot = thinned;
    }
    cx.record(
        thinning.at.message,
        "dedup",
        before,
        after,
        Some(pointer),
        detail,
    );
    Ok(())
}

fn marker_line(thinning: &Thinning, pointer: &str) -> String {
    marker(
        thinning.removed,
        &thinning.steps,
        thinning.unnumbered,
        pointer,
    )
}

/// `result` with the thinned texts and the marker appended to its last text part.
fn rebuild(result: &ToolResult, thinning: &Thinning, pointer: &str) -> ToolResult {
    let mut out = result.clone();
    let last_text = thinning.texts.iter().rposition(Option::is_some);
    for (i, (part, text)) in out.parts.iter_mut().zip(&thinning.texts).enumerate() {
        let (PartKind::Text { text: slot }, Some(text)) = (&mut part.kind, text) else {
            continue;
        };
        *slot = text.clone();
        if Some(i) == last_text {
            if !slot.is_empty() && !slot.ends_with('\n') {
                slot.push('\n');
            }
            slot.push_str(&marker_line(thinning, pointer));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_wording() {
        let one: BTreeSet<usize> = [7].into();
        assert_eq!(
            marker(12, &one, false, "spill://s/k"),
            "[12 duplicate lines removed; they appear in step 7; original: spill://s/k]"
        );
        assert_eq!(
            marker(1, &one, false, "p"),
            "[1 duplicate line removed; it appears in step 7; original: p]"
        );
        let two: BTreeSet<usize> = [7, 8].into();
        assert_eq!(
            marker(3, &two, false, "p"),
            "[3 duplicate lines removed; they appear in steps 7 and 8; original: p]"
        );
        assert_eq!(
            marker(3, &BTreeSet::new(), true, "p"),
            "[3 duplicate lines removed; they appear in a later tool result; original: p]"
        );
    }
}
