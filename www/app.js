// The playground page: load an input, map the controls onto compress options,
// run the replay in the worker, and draw the figures, charts, prompt view,
// spill browser and exports.
import { barChart, lineChart, short } from './charts.js';
import { Engine } from './engine.js';
import { cliCall, jsCall } from './export.js';
import { classifyInput, readFile } from './input.js';
import { SAMPLE_OPTIONS, applyControls, buildControls, controlForPath, readControls, setControls } from './options.js';
import { renderGrounding } from './grounding-view.js';
import { OcrClient, renderLegibility } from './legibility-view.js';
import { STAGES, renderChanges, renderPlan, renderRequest, renderStages } from './prompt-view.js';
import { SpillBrowser } from './spill-browser.js';
import { doneStatus } from './status.js';

const $ = (id) => document.getElementById(id);
const fmt = (n) => Number(n).toLocaleString('en-US');
const pct = (x) => `${(x * 100).toFixed(1)}%`;
/** Bytes as B, KB or MB (1024-based, as the spill list shows them). */
const size = (n) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`);

const state = {
  defaults: null,
  input: null, // { kind, text, label, file, steps }
  options: {},
  run: null, // worker result: { kind, session, steps, summary }
  t: 0,
  view: 'compressed',
  stepSeq: 0,
  stepData: null,
  // The pricing boxes follow the planner's prices until the user edits them.
  pricesEdited: false,
};

const engine = new Engine();
const ocr = new OcrClient();
const spills = new SpillBrowser(engine);
window.tracelitePlayground = state; // for tests and curious users

function setStatus(text, kind = 'info') {
  const s = $('status');
  s.textContent = text;
  s.dataset.kind = kind;
}

// ---- loading ----

async function loadText(text, label, file) {
  let input;
  try {
    input = classifyInput(text, label);
  } catch (err) {
    setStatus(err.message, 'error');
    return;
  }
  state.input = { ...input, file };
  state.t = input.kind === 'trajectory' ? Math.max(0, input.steps - 1) : 0;
  $('opt-format').disabled = input.kind === 'trajectory';
  $('input-label').textContent = `${input.label} (${input.kind === 'trajectory' ? `trajectory, ${input.steps} steps` : 'request'})`;
  await run();
}

const SAMPLE_FILE = 'tests/fixtures/demo-session.json';

/** The bundled sample's text, or null (status set) when it cannot be fetched. */
async function fetchSample() {
  const res = await fetch('./demo-session.json');
  if (!res.ok) {
    setStatus(`Could not load the sample session (HTTP ${res.status}).`, 'error');
    return null;
  }
  return res.text();
}

/** Loads the bundled sample at the demo's settings (SAMPLE_OPTIONS; the other controls stay). */
async function loadSample(pending) {
  setStatus('Loading the sample session…');
  const text = await (pending ?? fetchSample());
  if (text === null) return;
  applyControls($('controls'), SAMPLE_OPTIONS);
  await loadText(text, 'sample session', SAMPLE_FILE);
}

/**
 * The first paint: while the worker loads the package, the sample trajectory
 * is shown as loaded (its uncompressed prompt at the last step, as the agent
 * would send it), so the page is never blank.
 */
function previewSample(text) {
  if (state.run || text === null) return;
  let input;
  try {
    input = classifyInput(text, 'sample session');
  } catch {
    return;
  }
  // Built straight from the trajectory in the shape of the core's neutral
  // conversation (the package is not loaded yet), as the agent would send it.
  const trajectory = JSON.parse(text);
  const textPart = (t) => ({ type: 'text', text: t });
  const messages = [{ role: 'user', parts: [textPart(trajectory.task)] }];
  trajectory.steps.forEach((step, i) => {
    const id = `call_${i}`;
    const args = typeof step.args === 'string' ? step.args : JSON.stringify(step.args ?? {});
    const thought = step.thought ? [textPart(step.thought)] : [];
    messages.push({ role: 'assistant', parts: [...thought, { type: 'tool_call', id, name: step.tool, arguments: args }] });
    messages.push({ role: 'tool', parts: [{ type: 'tool_result', call_id: id, parts: [textPart(String(step.observation ?? ''))], is_error: false }] });
  });
  const conversation = {
    system: [{ role: 'system', parts: [textPart(trajectory.system ?? '')] }],
    messages: messages.map((m, i) => ({ ...m, index: i + 1 })),
  };
  $('input-label').textContent = `${input.label} (trajectory, ${input.steps} steps)`;
  const view = $('prompt-view');
  view.dataset.view = 'preview';
  renderRequest(view, conversation, [], onPointer);
  $('step-out').textContent = String(input.steps - 1);
  const slider = $('step');
  slider.max = String(input.steps - 1);
  slider.value = slider.max;
  slider.disabled = true;
  document.querySelector('input[name="view"][value="original"]').checked = true;
  $('step-figures').textContent = 'the sample as loaded; compressing it…';
  setStatus('Showing the sample session as loaded; loading the package to compress it…', 'busy');
}

async function loadFile(file) {
  try {
    await loadText(await readFile(file), file.name, file.name);
  } catch (err) {
    setStatus(`Could not read ${file.name}: ${err.message}`, 'error');
  }
}

// ---- running ----

function clearControlErrors() {
  for (const e of document.querySelectorAll('.control-error')) e.textContent = '';
  for (const i of document.querySelectorAll('#controls [aria-invalid]')) i.removeAttribute('aria-invalid');
}

function controlError(id, message) {
  const input = $(`opt-${id}`);
  input.setAttribute('aria-invalid', 'true');
  $(`opt-${id}-error`).textContent = message;
}

async function run() {
  if (!state.input || !state.defaults) return;
  clearControlErrors();
  const { options, invalid } = readControls($('controls'), state.defaults);
  if (state.input.kind === 'trajectory') delete options.format;
  if (invalid.length) {
    for (const id of invalid) controlError(id, 'Enter a number.');
    setStatus('Fix the highlighted settings.', 'error');
    return;
  }
  state.options = options;
  setStatus(state.input.kind === 'trajectory' ? `Replaying ${state.input.label}…` : `Compressing ${state.input.label}…`, 'busy');
  document.body.classList.add('busy');
  let result;
  try {
    result = await engine.run({ kind: state.input.kind, text: state.input.text }, options);
  } catch (err) {
    if (err.code === 'SUPERSEDED') return;
    document.body.classList.remove('busy');
    document.body.classList.add('stale');
    // Core messages read "<path>: <what>" (the code is err.code); show each part once.
    let message = err.message;
    if (err.code && message.startsWith(`${err.code}: `)) message = message.slice(err.code.length + 2);
    const control = controlForPath(err.path);
    if (control) {
      controlError(control.id, message.startsWith(`${err.path}: `) ? message.slice(err.path.length + 2) : message);
    }
    setStatus(`${err.code ? `${err.code}: ` : ''}${message} — the figures below are from the last good run.`, 'error');
    return;
  }
  document.body.classList.remove('busy', 'stale');
  state.run = result;
  followPrices(result.prices, options.provider ?? state.defaults.provider);
  state.t = Math.min(state.t, result.steps.length - 1);
  for (const r of document.querySelectorAll('input[name="view"]')) r.checked = r.value === state.view;
  const slider = $('step');
  slider.max = String(result.steps.length - 1);
  slider.value = String(state.t);
  slider.disabled = result.steps.length <= 1;
  drawFigures();
  drawCharts();
  drawExports();
  await Promise.all([showStep(state.t), spills.refresh()]);
  document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
  const provider = options.provider ?? state.defaults.provider;
  setStatus(doneStatus(result.kind, result.steps[0]?.format ?? '', provider, result.summary), 'done');
}

// ---- figures and charts ----

/**
 * Puts the planner's prices for `provider` in the pricing boxes, so the cost
 * figures and the planner's rows price the same tokens alike; a value the user
 * typed stays (until Reset to defaults). No prices (planner off): unchanged.
 */
function followPrices(prices, provider) {
  const note = $('price-note');
  if (state.pricesEdited) {
    note.textContent = 'your prices';
    return;
  }
  if (!prices || !(prices.input > 0)) return;
  $('price').value = String(prices.input);
  $('cache-mult').value = String(Math.round((prices.cachedInput / prices.input) * 1000) / 1000);
  note.textContent = `the planner's prices for ${provider}`;
}

function costs() {
  const price = Math.max(0, Number($('price').value) || 0) / 1e6;
  const mult = Math.min(1, Math.max(0, Number($('cache-mult').value) || 0));
  const cached = (tokens, share) => tokens * price * (share * mult + (1 - share));
  const steps = state.run.steps;
  const cum = (f) => { let acc = 0; return steps.map((p) => (acc += f(p))); };
  return {
    baseline: cum((p) => p.baseline * price),
    baselineCached: cum((p) => cached(p.baseline, p.baselineCachedShare)),
    compressed: cum((p) => p.compressed * price),
    compressedCached: cum((p) => cached(p.compressed, p.cachedShare)),
  };
}

function drawFigures() {
  const s = state.run.summary;
  $('baseline').textContent = fmt(s.baseline_tokens);
  $('compressed').textContent = fmt(s.compressed_tokens);
  const red = $('reduction');
  red.textContent = pct(s.reduction);
  red.dataset.reduction = String(s.reduction);
  red.dataset.baseline = String(s.baseline_tokens);
  red.dataset.compressed = String(s.compressed_tokens);
  $('prefix').textContent = state.run.kind === 'trajectory' ? pct(s.prefix_reuse) : '—';
  // Bytes beside tokens: snapshots travel as base64 PNG, so bytes can grow while tokens fall.
  const bytes = $('bytes');
  bytes.textContent = `${size(s.baseline_bytes)} → ${size(s.compressed_bytes)}`;
  bytes.dataset.before = String(s.baseline_bytes);
  bytes.dataset.after = String(s.compressed_bytes);
  const c = costs();
  $('cost').textContent = `baseline ${short(c.baseline.at(-1), true)} → ${short(c.baselineCached.at(-1), true)}; ` +
    `compressed ${short(c.compressed.at(-1), true)} → ${short(c.compressedCached.at(-1), true)}`;
}

function drawCharts() {
  if (!state.run) return;
  $('charts').hidden = false;
  const steps = state.run.steps;
  // One request is one point: the line charts would show nothing, only the stage bars stay.
  for (const id of ['chart-tokens', 'chart-cumulative', 'chart-cost']) $(id).toggleAttribute('hidden', steps.length < 2);
  const pick = (t) => setStep(t);
  const cum = (key) => { let acc = 0; return steps.map((p) => (acc += p[key])); };
  lineChart($('chart-tokens'), {
    title: 'Input tokens per step',
    marker: state.t,
    onPick: pick,
    series: [
      { name: 'baseline', cls: 'baseline', values: steps.map((p) => p.baseline) },
      { name: 'compressed', cls: 'compressed', values: steps.map((p) => p.compressed) },
    ],
  });
  lineChart($('chart-cumulative'), {
    title: 'Cumulative input tokens',
    marker: state.t,
    onPick: pick,
    series: [
      { name: 'baseline', cls: 'baseline', values: cum('baseline') },
      { name: 'compressed', cls: 'compressed', values: cum('compressed') },
    ],
  });
  const c = costs();
  lineChart($('chart-cost'), {
    title: 'Cumulative cost (USD), with and without prompt caching',
    marker: state.t,
    money: true,
    onPick: pick,
    series: [
      { name: 'baseline', cls: 'baseline', values: c.baseline },
      { name: 'baseline cached', cls: 'baseline dashed', values: c.baselineCached },
      { name: 'compressed', cls: 'compressed', values: c.compressed },
      { name: 'compressed cached', cls: 'compressed dashed', values: c.compressedCached },
    ],
  });
  const saved = Object.fromEntries(STAGES.map((s) => [s, 0]));
  for (const p of steps) for (const st of p.stages) saved[st.stage] = (saved[st.stage] ?? 0) + st.saved;
  const total = steps.reduce((a, p) => a + p.baseline, 0);
  barChart($('chart-stages'), {
    title: 'Tokens saved per stage (all steps)',
    bars: STAGES.map((s) => ({
      name: s,
      cls: `stage-${s}`,
      value: Math.max(0, saved[s]),
      label: `${short(saved[s])}${total ? ` (${pct(saved[s] / total)})` : ''}`,
    })),
  });
}

function drawExports() {
  const session = state.run.session;
  $('export-js').textContent = jsCall(state.run.kind, state.options, session, state.input.file);
  const cli = $('export-cli');
  cli.textContent = cliCall(state.run.kind, state.options, state.input.file);
  cli.dataset.options = JSON.stringify(state.options);
}

// ---- the step view ----

function onPointer(pointer) {
  spills.open(pointer);
}

async function showStep(t) {
  if (!state.run) return;
  const seq = ++state.stepSeq;
  let data;
  try {
    data = await engine.step(t);
  } catch (err) {
    if (err.code !== 'SUPERSEDED') setStatus(err.message, 'error');
    return;
  }
  if (seq !== state.stepSeq) return;
  const started = performance.now();
  state.stepData = data;
  const { report } = data;
  const original = state.view === 'original';
  const view = $('prompt-view');
  view.dataset.step = String(t);
  view.dataset.view = state.view;
  renderRequest(view, original ? data.originalConversation : data.conversation, original ? [] : report.changes, onPointer);
  renderLegibility(view, original ? null : data.snapshots, ocr);
  renderChanges($('changes-table'), report.changes, view, onPointer);
  renderStages($('stages-table'), report.stages);
  $('plan-summary').textContent = renderPlan($('plan-table'), report.plan);
  document.querySelector('#plan .plan-note').textContent = report.plan
    ? `${report.plan.demoted} observations handed to the rewriting stages so far; prices: ${report.plan.pricesSource}` +
      ` ($${report.plan.prices.input} input, $${report.plan.prices.cachedInput} cached, $${report.plan.prices.cacheWrite} cache write per million tokens).`
    : '';
  renderGrounding($('grounding'), data.grounding, t);
  $('change-count').textContent = String(report.changes.length);
  $('step-out').textContent = String(t);
  const p = state.run.steps[t];
  const c = costs();
  const turn = (series) => series[t] - (t > 0 ? series[t - 1] : 0);
  $('step-figures').dataset.turnCost = String(turn(c.compressedCached));
  $('step-figures').textContent = `${fmt(p.baseline)} → ${fmt(p.compressed)} tokens` +
    ` · this turn with caching $${turn(c.baselineCached).toFixed(4)} → $${turn(c.compressedCached).toFixed(4)}` +
    (p.baseline ? ` (${pct(1 - p.compressed / p.baseline)} less)` : '') +
    ` · ${size(report.bytesBefore)} → ${size(report.bytesAfter)} JSON` +
    (report.prefix ? ` · prefix kept ${pct(report.prefix.previousBytes ? report.prefix.sharedBytes / report.prefix.previousBytes : 0)}` : '');
  $('export-request').value = data.request;
  view.dataset.renderMs = (performance.now() - started).toFixed(1);
}

function setStep(t) {
  if (!state.run) return;
  const n = state.run.steps.length;
  state.t = Math.max(0, Math.min(n - 1, t));
  $('step').value = String(state.t);
  $('step-out').textContent = String(state.t);
  drawCharts();
  showStep(state.t);
}

// ---- wiring ----

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    setStatus(`Copied the ${what}.`, 'done');
  } catch {
    setStatus(`Could not copy the ${what} (clipboard not available); select it and copy by hand.`, 'error');
  }
}

function wire() {
  let timer;
  buildControls($('controls'), state.defaults, (control) => {
    clearTimeout(timer);
    // Typing a number waits for a pause; switches and menus apply at once.
    timer = setTimeout(run, control.type === 'number' ? 250 : 0);
  });
  $('controls').addEventListener('submit', (e) => { e.preventDefault(); run(); });
  $('reset-options').addEventListener('click', () => {
    setControls($('controls'), state.defaults);
    state.pricesEdited = false;
    run();
  });
  for (const id of ['price', 'cache-mult']) {
    $(id).addEventListener('input', () => {
      state.pricesEdited = true;
      $('price-note').textContent = 'your prices';
      if (state.run) { drawFigures(); drawCharts(); }
    });
  }
  $('load-sample').addEventListener('click', () => loadSample());
  $('file-input').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    if (file) loadFile(file);
    e.target.value = '';
  });
  $('paste-load').addEventListener('click', () => {
    loadText($('paste-text').value, 'pasted JSON', 'pasted.json');
    $('paste-box').open = false;
  });
  $('step').addEventListener('input', (e) => setStep(Number(e.target.value)));
  $('step-prev').addEventListener('click', () => setStep(state.t - 1));
  $('step-next').addEventListener('click', () => setStep(state.t + 1));
  for (const r of document.querySelectorAll('input[name="view"]')) {
    r.addEventListener('change', () => { state.view = r.value; showStep(state.t); });
  }
  $('copy-request').addEventListener('click', () => copy($('export-request').value, 'compressed request'));
  $('download-request').addEventListener('click', () => download(`compressed-step-${state.t}.json`, $('export-request').value));
  $('copy-js').addEventListener('click', () => copy($('export-js').textContent, 'JS call'));

  // Drop a file anywhere.
  let depth = 0;
  const overlay = (on) => document.body.classList.toggle('dragging', on);
  document.addEventListener('dragenter', (e) => { if (e.dataTransfer?.types.includes('Files')) { depth++; overlay(true); } });
  document.addEventListener('dragleave', () => { depth = Math.max(0, depth - 1); if (depth === 0) overlay(false); });
  document.addEventListener('dragover', (e) => e.preventDefault());
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    overlay(false);
    const file = e.dataTransfer?.files?.[0];
    if (file) loadFile(file);
  });
  // [ and ] step through the replay from anywhere but a text field.
  document.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.target.closest?.('input, textarea, select')) return;
    if (e.key === '[') setStep(state.t - 1);
    else if (e.key === ']') setStep(state.t + 1);
  });
  engine.onProgress = ({ t, n }) => setStatus(`Replaying ${state.input?.label ?? ''}: step ${t + 1} of ${n}…`, 'busy');
}

/** The sticky header's height as --top-h, so jumps (the skip link, a change's message) land below it. */
function trackHeader() {
  const top = document.querySelector('.top');
  const set = () => document.documentElement.style.setProperty('--top-h', `${top.offsetHeight}px`);
  new ResizeObserver(set).observe(top);
  set();
}

async function main() {
  trackHeader();
  // Fetch and show the sample at once, while the worker loads the package.
  const sample = fetchSample();
  sample.then(previewSample);
  let info;
  try {
    info = await engine.init();
  } catch (err) {
    setStatus(`The package did not load (${err.message}). Build it with \`make pkg\` and serve with \`make playground\`.`, 'error');
    return;
  }
  state.defaults = info.defaults;
  $('version').textContent = `v${info.version}`;
  wire();
  document.body.dataset.ready = 'true';
  await loadSample(sample);
}

main();
