// The step view's legibility of each snapshot (issue 40): the facts a later
// call uses that are inside the text the snapshot rendered (www/worker.js,
// www/legibility.js, as `make bench` counts them) and
// which of them tesseract reads from its images. The OCR runs on the server
// of `make playground` (POST ./ocr, www/ocr-endpoint.mjs: 2x upscale,
// `--psm 6`, as the bench); the reading rule is www/legibility.js's. Each image is
// read once, when its snapshot scrolls into view, and cached by its hash.
// Without the endpoint (a static host) or without tesseract the facts are
// listed with no figure.
import { readFacts, snapshotOcrText } from './legibility.js';
import { el } from './prompt-view.js';

/** What the view says when no OCR is at hand. */
export const NEEDS_TESSERACT = 'legibility needs tesseract (`make playground`)';
const LAYOUT_NAMES = { 'line by line': 'lines kept line by line', 'run together': 'lines run together (»)', unknown: 'layout not reported' };
const KIND_NAMES = { path: 'path', identifier: 'identifier', integer: 'number' };
/** Image reads in flight at once from this page (the server runs two tesseracts). */
const PARALLEL = 2;

/** Bytes of a `data:image/png;base64,…` URL. */
function pngBytes(src) {
  const b64 = src.slice(src.indexOf(',') + 1);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The page's handle on the OCR endpoint: `read(src)` resolves to
 * `{ text }` or `{ unavailable: reason }`; texts are cached by the image's
 * SHA-256, and once the endpoint is known to be absent (or without
 * tesseract) no further request is made.
 */
export class OcrClient {
  #cache = new Map();
  #probed = null;
  #queue = [];
  #active = 0;
  /** null until known; then `{ unavailable: reason }` when no OCR can be had. */
  absent = null;

  constructor(url = new URL('./ocr', document.baseURI)) {
    this.url = url;
  }

  /** Resolves once the server said whether it reads images (asked once). */
  ready() {
    this.#probed ??= this.#probe();
    return this.#probed;
  }

  async read(src) {
    await this.ready();
    if (this.absent) return this.absent;
    const bytes = pngBytes(src);
    const key = await sha256(bytes);
    let hit = this.#cache.get(key);
    if (!hit) {
      hit = this.#limit(() => this.#post(bytes));
      this.#cache.set(key, hit);
      // A failure is not kept: a later view asks again.
      hit.then((r) => { if (!('text' in r)) this.#cache.delete(key); });
    }
    return hit;
  }

  #limit(task) {
    return new Promise((resolve) => {
      const failed = (err) => resolve({ unavailable: `OCR failed: ${err?.message ?? err}` });
      this.#queue.push(() => task().then(resolve, failed).finally(() => {
        this.#active--;
        this.#next();
      }));
      this.#next();
    });
  }

  #next() {
    while (this.#active < PARALLEL && this.#queue.length > 0) {
      this.#active++;
      this.#queue.shift()();
    }
  }

  /** Asks the server once whether it reads images (GET ./ocr); sets `absent` when not. */
  async #probe() {
    let res;
    try {
      res = await fetch(this.url, { method: 'GET', cache: 'no-store' });
    } catch {
      this.absent = { unavailable: `${NEEDS_TESSERACT}: no OCR server answered` };
      return;
    }
    const json = await this.#json(res);
    if (!res.ok || typeof json?.available !== 'boolean') {
      this.absent = { unavailable: `${NEEDS_TESSERACT}: this server has no OCR endpoint (HTTP ${res.status})` };
    } else if (!json.available) {
      this.absent = { unavailable: `${NEEDS_TESSERACT}: ${json.error}` };
    }
  }

  async #json(res) {
    if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) return null;
    return res.json().catch(() => null);
  }

  async #post(bytes) {
    if (this.absent) return this.absent;
    let res;
    try {
      res = await fetch(this.url, { method: 'POST', headers: { 'content-type': 'image/png' }, body: bytes });
    } catch {
      return (this.absent = { unavailable: `${NEEDS_TESSERACT}: no OCR server answered` });
    }
    const json = await this.#json(res);
    if (res.ok && typeof json?.text === 'string') return { text: json.text, key: json.key };
    if (!json) return (this.absent = { unavailable: `${NEEDS_TESSERACT}: this server has no OCR endpoint (HTTP ${res.status})` });
    if (json.code === 'TESSERACT_MISSING') return (this.absent = { unavailable: `${NEEDS_TESSERACT}: ${json.error}` });
    return { unavailable: `OCR failed (${json.code ?? res.status}): ${json.error ?? ''}` };
  }
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;

/** The one-line figure of a snapshot once read: share, layout, kinds. */
export function legibilitySummary(snapshot, read) {
  const n = snapshot.facts.length;
  const byKind = {};
  for (const f of snapshot.facts) {
    const k = (byKind[f.kind] ??= { facts: 0, read: 0 });
    k.facts++;
    if (read.includes(f)) k.read++;
  }
  const kinds = Object.entries(byKind).map(([k, c]) => `${KIND_NAMES[k] ?? k} ${c.read}/${c.facts}`).join(', ');
  return `Legibility: tesseract reads ${read.length} of ${n} fact${n === 1 ? '' : 's'} inside (${pct(read.length / n)}; ${kinds}) · ${LAYOUT_NAMES[snapshot.layout] ?? snapshot.layout}`;
}

function factItem(f, verdict) {
  return el('li', { 'data-fact': f.text, 'data-kind': f.kind, 'data-read': verdict === 'read' ? 'true' : verdict === 'missed' ? 'false' : null },
    el('code', { text: f.text }), ' ', el('span', { class: 'kind', text: KIND_NAMES[f.kind] ?? f.kind }),
    verdict ? el('span', { class: `verdict verdict-${verdict}`, text: verdict }) : null);
}

/** Draws a snapshot's panel in its state: `waiting`, `reading`, `read` (with `ocrText`), `unavailable` (with `reason`) or `none` (no facts). */
function draw(panel, snapshot, state, { ocrText = '', reason = '' } = {}) {
  panel.dataset.state = state;
  const parts = [];
  const steps = `step${snapshot.steps.length === 1 ? '' : 's'} ${snapshot.steps.join(', ')}`;
  const cut = snapshot.cut.length
    ? el('p', { class: 'muted cut', text: `${snapshot.cut.length} other fact${snapshot.cut.length === 1 ? '' : 's'} of ${steps} ${snapshot.cut.length === 1 ? 'was' : 'were'} cut before rendering (not inside the image, not counted).` })
    : null;
  if (snapshot.facts.length === 0) {
    panel.dataset.state = 'none';
    parts.push(el('p', { class: 'legibility-summary', text: `Legibility: no fact a later call uses is inside this snapshot of ${steps}${snapshot.rendered ? '' : ' (its rendered text was not found)'}.` }), cut);
    panel.replaceChildren(...parts.filter(Boolean));
    return;
  }
  if (state === 'read') {
    const { read, missed } = readFacts(snapshot.facts, ocrText);
    panel.dataset.read = String(read.length);
    panel.dataset.facts = String(snapshot.facts.length);
    parts.push(
      el('p', { class: 'legibility-summary', text: legibilitySummary(snapshot, read) }),
      el('ul', { class: 'legibility-facts', 'aria-label': 'Facts inside this snapshot' },
        ...read.map((f) => factItem(f, 'read')), ...missed.map((f) => factItem(f, 'missed'))),
      cut,
      el('details', { class: 'ocr-text' }, el('summary', { text: 'tesseract\'s text (2x upscale, --psm 6)' }), el('pre', { text: ocrText })),
    );
  } else {
    const facts = `Legibility: ${snapshot.facts.length} fact${snapshot.facts.length === 1 ? '' : 's'} inside this snapshot of ${steps}`;
    const note = {
      waiting: `${facts}; tesseract reads the image when it comes into view.`,
      reading: `${facts}; reading the image with tesseract…`,
      unavailable: `${facts}; ${reason}.`,
    }[state];
    parts.push(
      el('p', { class: 'legibility-summary', text: note }),
      el('ul', { class: 'legibility-facts', 'aria-label': 'Facts inside this snapshot' }, ...snapshot.facts.map((f) => factItem(f, null))),
      cut,
    );
  }
  panel.replaceChildren(...parts.filter(Boolean));
}

async function readPanel(panel, snapshot, srcs, client) {
  draw(panel, snapshot, 'reading');
  const results = await Promise.all(srcs.map((s) => client.read(s)));
  if (!panel.isConnected) return;
  const failed = results.find((r) => !('text' in r));
  if (failed) draw(panel, snapshot, 'unavailable', { reason: failed.unavailable });
  else draw(panel, snapshot, 'read', { ocrText: snapshotOcrText(results.map((r) => r.text)) });
}

let observer = null;

/**
 * Adds a legibility panel under each snapshot of the prompt view
 * (`container`): `snapshots` are the worker's for the step shown (null for a
 * single request: nothing is added). A panel reads its images when it comes
 * into view.
 */
export function renderLegibility(container, snapshots, client) {
  observer?.disconnect();
  if (!snapshots) return;
  const pending = new Map();
  observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting || !pending.has(e.target)) continue;
      const { snapshot, srcs } = pending.get(e.target);
      pending.delete(e.target);
      observer.unobserve(e.target);
      readPanel(e.target, snapshot, srcs, client);
    }
  }, { rootMargin: '200px' });
  for (const snapshot of snapshots) {
    const article = container.querySelector(`article[data-message="${snapshot.message}"]`);
    if (!article) continue;
    const srcs = [...article.querySelectorAll('img')].map((i) => i.src);
    const panel = el('section', { class: 'legibility', 'aria-label': 'Legibility of this snapshot', 'data-steps': snapshot.steps.join(' '), 'data-layout': snapshot.layout });
    article.append(panel);
    if (snapshot.facts.length === 0) {
      draw(panel, snapshot, 'none');
      continue;
    }
    if (client.absent) {
      draw(panel, snapshot, 'unavailable', { reason: client.absent.unavailable });
      continue;
    }
    draw(panel, snapshot, 'waiting');
    pending.set(panel, { snapshot, srcs });
    observer.observe(panel);
  }
  // Known only after the first answer: without OCR, the waiting panels say so at once.
  const current = observer;
  client.ready().then(() => {
    if (!client.absent || observer !== current) return;
    for (const [panel, { snapshot }] of pending) draw(panel, snapshot, 'unavailable', { reason: client.absent.unavailable });
    pending.clear();
    current.disconnect();
  });
}
