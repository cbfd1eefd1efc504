//! Grep work budget (issue 16): any pattern, any text, any budget. A search
//! whose whole cost (program size × text bytes) fits the budget is never
//! refused and finds what an unbounded search finds; one over it is refused
//! with `GREP_TOO_COSTLY` (at once when no literal narrows it); nothing runs
//! long (libFuzzer's `-timeout` catches a search that escapes its budget).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelite::error::ErrorCode;
use tracelite::spill::lines::LineIndex;
use tracelite::spill::{self, GrepOptions, Pattern};

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<5>() else {
        return;
    };
    let rest = String::from_utf8_lossy(rest);
    let (pattern, seed) = rest.split_once('\0').unwrap_or((&rest, "a b\nc"));
    // The text repeats the seed up to ~64 KB, so costly patterns meet real sizes.
    let times = usize::from(head[1]) * 256 / seed.len().max(1) + 1;
    let text = seed.repeat(times.min(65_536 / seed.len().max(1) + 1));
    let Ok(p) = Pattern::new(pattern, head[0] & 1 != 0, head[0] & 2 != 0) else {
        return;
    };
    let index = LineIndex::new(&text);
    // Budgets from 0 to 2^47 in steps of 2^k.
    let budget = u64::from(u16::from_le_bytes([head[2], head[3]])) << (head[4] % 32);
    let whole = p.cost().saturating_mul(text.len() as u64);
    let bounded = GrepOptions {
        max_cost: budget,
        ..GrepOptions::default()
    };
    match spill::grep::grep(&text, &index, &p, &bounded) {
        Ok(r) => {
            // Within budget the answer is the unbounded one.
            if whole <= 1 << 34 {
                let free = GrepOptions {
                    max_cost: u64::MAX,
                    ..GrepOptions::default()
                };
                let all = spill::grep::grep(&text, &index, &p, &free).expect("unbounded");
                assert_eq!(r, all);
            }
        }
        Err(e) => {
            assert_eq!(e.code, ErrorCode::GrepTooCostly, "{e:?}");
            assert!(whole > budget, "refused a search within budget: {whole} <= {budget}");
        }
    }
    if p.required().is_none() && whole > budget && !text.is_empty() {
        assert!(spill::grep::grep(&text, &index, &p, &bounded).is_err());
    }
});
