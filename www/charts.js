// Small SVG charts (no library): line charts over replay steps and a bar chart.
const NS = 'http://www.w3.org/2000/svg';
const W = 520;
const H = 180;
const PAD = { left: 62, right: 12, top: 28, bottom: 28 };

function s(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Ticks from 0 up to at least `max`, evenly spaced by a round step (1, 2 or 5
 * × a power of ten, and a whole number when `integer`), at most `count` + 1
 * of them: `[0, step, 2·step, …]`; the last one is the axis's top.
 */
export function niceTicks(max, count = 4, { integer = false } = {}) {
  if (!(max > 0)) return [0, 1];
  const rough = max / count;
  const p = 10 ** Math.floor(Math.log10(rough));
  let step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= rough) ?? 10 * p;
  if (integer) step = Math.max(1, Math.round(step));
  const n = Math.ceil(max / step - 1e-9);
  return Array.from({ length: n + 1 }, (_, k) => Number((k * step).toPrecision(12)));
}

/** Steps to label on an x axis of `n` points (0 … n−1): a round step, at most 8 labels. */
export function stepTicks(n) {
  if (n <= 1) return [0];
  const ticks = niceTicks(n - 1, 7, { integer: true });
  return ticks.filter((i) => i <= n - 1);
}

/** Compact number: 12.3k, 1.2M; money with `$`. */
export function short(v, money = false) {
  const sign = money ? '$' : '';
  const a = Math.abs(v);
  if (money && a < 10) return `${sign}${v.toFixed(a < 1 ? 3 : 2)}`;
  if (a >= 1e6) return `${sign}${(v / 1e6).toFixed(a >= 1e7 ? 0 : 1)}M`;
  if (a >= 1e3) return `${sign}${(v / 1e3).toFixed(a >= 1e4 ? 0 : 1)}k`;
  return `${sign}${Math.round(v)}`;
}

function frame(svg, title) {
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', title);
  svg.append(s('title', {}, title));
}

function legend(svg, series) {
  let x = PAD.left;
  for (const ser of series) {
    svg.append(s('rect', { x, y: 8, width: 12, height: 12, class: `swatch ${ser.cls}` }));
    const label = s('text', { x: x + 16, y: 18, class: 'legend' }, ser.name);
    svg.append(label);
    let width = ser.name.length * 6.5;
    try {
      width = label.getComputedTextLength() || width;
    } catch {
      // not rendered (display: none): keep the estimate
    }
    x += 28 + width;
  }
}

/**
 * Draws `series` (`[{ name, cls, values: number[] }]`, one value per step) with
 * a marker at step `marker`; a click picks a step (`onPick(t)`).
 */
export function lineChart(svg, { title, series, marker = 0, money = false, onPick }) {
  frame(svg, title);
  const n = Math.max(1, ...series.map((x) => x.values.length));
  const yticks = niceTicks(Math.max(0, ...series.flatMap((x) => x.values)));
  const ymax = yticks.at(-1);
  const x = (i) => PAD.left + (n === 1 ? (W - PAD.left - PAD.right) / 2 : (i / (n - 1)) * (W - PAD.left - PAD.right));
  const y = (v) => H - PAD.bottom - (v / ymax) * (H - PAD.top - PAD.bottom);
  for (const v of yticks) {
    svg.append(s('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'grid' }));
    svg.append(s('text', { x: PAD.left - 6, y: y(v) + 4, class: 'tick y-tick', 'text-anchor': 'end' }, short(v, money)));
  }
  for (const i of stepTicks(n)) {
    svg.append(s('text', { x: x(i), y: H - PAD.bottom + 16, class: 'tick x-tick', 'text-anchor': 'middle' }, String(i)));
  }
  svg.append(s('text', { x: W - PAD.right, y: H - 2, class: 'axis', 'text-anchor': 'end' }, 'step t'));
  svg.append(s('line', { x1: x(marker), x2: x(marker), y1: PAD.top - 4, y2: H - PAD.bottom, class: 'marker' }));
  for (const ser of series) {
    const pts = ser.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    svg.append(s('polyline', { points: pts, class: `series ${ser.cls}` }));
    if (ser.values.length <= 40) {
      ser.values.forEach((v, i) => svg.append(s('circle', { cx: x(i), cy: y(v), r: 2.5, class: `point ${ser.cls}` })));
    }
  }
  legend(svg, series);
  if (onPick) {
    const hit = s('rect', { x: PAD.left, y: PAD.top, width: W - PAD.left - PAD.right, height: H - PAD.top - PAD.bottom, class: 'hit' });
    hit.addEventListener('click', (e) => {
      const box = svg.getBoundingClientRect();
      const px = ((e.clientX - box.left) / box.width) * W;
      const t = n === 1 ? 0 : Math.round(((px - PAD.left) / (W - PAD.left - PAD.right)) * (n - 1));
      onPick(Math.max(0, Math.min(n - 1, t)));
    });
    svg.append(hit);
  }
}

/** Horizontal bars (`[{ name, cls, value }]`), values labelled. */
export function barChart(svg, { title, bars }) {
  frame(svg, title);
  const max = niceTicks(Math.max(0, ...bars.map((b) => b.value))).at(-1);
  const rowH = (H - PAD.top - 10) / Math.max(1, bars.length);
  const left = 70;
  bars.forEach((b, k) => {
    const y0 = PAD.top + k * rowH;
    const w = Math.max(0, (b.value / max) * (W - left - 80));
    svg.append(s('text', { x: left - 6, y: y0 + rowH / 2 + 4, class: 'tick', 'text-anchor': 'end' }, b.name));
    svg.append(s('rect', { x: left, y: y0 + 4, width: w, height: rowH - 8, class: `bar ${b.cls}` }));
    svg.append(s('text', { x: left + w + 6, y: y0 + rowH / 2 + 4, class: 'value' }, b.label ?? short(b.value)));
  });
  svg.append(s('text', { x: PAD.left - 50, y: 18, class: 'legend' }, title));
}
