// SVG line chart: cumulative input tokens per policy over one trajectory.

const COLORS = ['#222222', '#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#9a6324', '#808000', '#469990', '#000075', '#aaaaaa'];

function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function niceStep(max, ticks) {
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

function fmt(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)}k`;
  return String(n);
}

/**
 * `series`: `[{ label, values }]` (cumulative tokens per step). Returns SVG text.
 */
export function lineChart({ title, series, xLabel = 'step', yLabel = 'cumulative input tokens' }) {
  const W = 980;
  const H = 480;
  const m = { l: 70, r: 340, t: 40, b: 50 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const n = Math.max(1, ...series.map((s) => s.values.length));
  const maxY = Math.max(1, ...series.flatMap((s) => s.values));
  const yStep = niceStep(maxY, 5);
  const yMax = Math.ceil(maxY / yStep) * yStep;
  const x = (i) => m.l + (n <= 1 ? 0 : (i / (n - 1)) * pw);
  const y = (v) => m.t + ph - (v / yMax) * ph;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${m.l}" y="22" font-size="14" font-weight="bold">${esc(title)}</text>`);
  for (let v = 0; v <= yMax; v += yStep) {
    out.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${m.l - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${fmt(v)}</text>`);
  }
  const xStep = niceStep(n - 1 || 1, 8);
  for (let i = 0; i < n; i += xStep) {
    out.push(`<text x="${x(i).toFixed(1)}" y="${m.t + ph + 18}" text-anchor="middle">${i}</text>`);
  }
  out.push(`<line x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${m.t + ph}" stroke="#444"/>`);
  out.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${m.t + ph}" y2="${m.t + ph}" stroke="#444"/>`);
  out.push(`<text x="${m.l + pw / 2}" y="${H - 10}" text-anchor="middle">${esc(xLabel)}</text>`);
  out.push(`<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    const pts = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const dash = k >= COLORS.length ? ' stroke-dasharray="4 3"' : '';
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.8"${dash} points="${pts}"/>`);
    const ly = m.t + 14 + k * 18;
    out.push(`<line x1="${m.l + pw + 16}" x2="${m.l + pw + 40}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="2.5"/>`);
    const last = s.values.at(-1) ?? 0;
    out.push(`<text x="${m.l + pw + 46}" y="${ly}">${esc(s.label)} (${fmt(last)})</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
