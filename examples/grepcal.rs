use std::time::Instant;
use tracelite::spill::lines::LineIndex;
use tracelite::spill::{grep, GrepOptions, Pattern};
fn main() {
    let line = "INFO 2024-01-01 12:00:00 worker-3 processed request id=abcdef status=200 in 12ms\n";
    let mut text = String::new();
    while text.len() < 100_000 { text.push_str(line); }
    let big: String = "x".repeat(100_000);
    let index = LineIndex::new(&text);
    let bindex = LineIndex::new(&big);
    for p in ["error", "err(or)?: \\w+", "\\w+", "(?i)error", "[a-z]+=\\d+", "(.*){9}x", "(.*){99}x", "(.*){999}x", "(a|b|c|d|e|f)+z", "(?i)(\\w+\\s*){20}", ".*.*.*.*.*=", "\\b\\w+\\b"] {
        let pat = Pattern::new(p, false, false).unwrap();
        for (name, t, ix) in [("lines", &text, &index), ("one", &big, &bindex)] {
            let o = GrepOptions { max_cost: u64::MAX, ..GrepOptions::default() };
            let s = Instant::now();
            let r = grep::grep(t, ix, &pat, &o).unwrap();
            let el = s.elapsed().as_secs_f64();
            println!("{p:24} {name:5} cost={:8} t={:.4}s ns/(cost*byte)={:.5} matches={}", pat.cost(), el, el*1e9/(pat.cost().max(1) as f64*1e5), r.total_matches);
        }
    }
}
