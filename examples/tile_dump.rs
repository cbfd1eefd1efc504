fn main() {
    let px: f32 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(10.0);
    let f = fontdue::Font::from_bytes(
        &include_bytes!("../src/optical/font/DejaVuSansMono-subset.ttf")[..],
        fontdue::FontSettings::default(),
    )
    .unwrap();
    for ch in ['_', 'i', '\'', 'g'] {
        let (m, cov) = f.rasterize(ch, px);
        println!("{ch:?} {m:?}");
        for row in cov.chunks(m.width.max(1)) {
            println!(
                "  {}",
                row.iter().map(|c| format!("{c:4}")).collect::<String>()
            );
        }
    }
}
