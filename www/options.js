// The pipeline controls: one table maps each form control onto a setting of
// `compress` (pkg-config/core/index.d.ts). The page sends only what differs from the
// core's defaults, so its figures equal `replay --options <that JSON>`.

/** Form controls, in display order. `path` is the setting's place in the options. */
export const CONTROLS = [
  { id: 'provider', label: 'Provider', path: ['provider'], type: 'select',
    choices: ['openai', 'openai-patch', 'anthropic', 'gemini', 'qwen'],
    help: 'Prices images and decides where snapshots go.' },
  { id: 'model', label: 'Model (snapshots only for one that reads images)', path: ['model'], type: 'text', parse: (v) => v.trim(),
    help: 'As the provider or a router names it (gpt-5, anthropic/claude-sonnet-4.5); empty: the request\'s own.' },
  { id: 'format', label: 'Request format', path: ['format'], type: 'select',
    choices: ['', 'openai-chat', 'openai-responses', 'anthropic', 'gemini'], names: { '': 'detect' },
    help: 'Only for a loaded request; a trajectory replays as OpenAI Chat.' },
  { id: 'budget', label: 'Budget (context window, tokens)', path: ['budget'], type: 'number', min: 1000, step: 1000 },
  { id: 'window', label: 'Window (recent tool results kept verbatim)', path: ['window'], type: 'number', min: 0, step: 1 },
  { id: 'ratio', label: 'Optical ratio k (text / image tokens)', path: ['optical', 'ratio'], type: 'number', min: 0.1, step: 0.1 },
  { id: 'spill', label: 'Spill large tool results', path: ['spill', 'enabled'], type: 'checkbox', stage: 'spill' },
  { id: 'spillFraction', label: 'Spill cap, share of budget', path: ['spill', 'fraction'], type: 'number', min: 0, max: 1, step: 0.01 },
  { id: 'spillFloor', label: 'Spill cap floor (tokens)', path: ['spill', 'floorTokens'], type: 'number', min: 0, step: 100 },
  { id: 'dedup', label: 'Dedup repeated lines', path: ['dedup', 'enabled'], type: 'checkbox', stage: 'dedup' },
  { id: 'phase', label: 'Phase clean-up (consumed or superseded outputs)', path: ['phase', 'enabled'], type: 'checkbox', stage: 'phase' },
  { id: 'optical', label: 'Optical snapshots', path: ['optical', 'enabled'], type: 'select', stage: 'optical',
    choices: ['auto', 'true', 'false'], names: { auto: 'auto (models that read images)', true: 'on', false: 'off' },
    parse: (v) => (v === 'auto' ? 'auto' : v === 'true') },
  { id: 'compact', label: 'Compaction', path: ['compact', 'enabled'], type: 'checkbox', stage: 'compact' },
  { id: 'threshold', label: 'Compaction threshold (tokens)', path: ['compact', 'threshold'], type: 'number', min: 0, step: 1000 },
  { id: 'planner', label: 'Planner (rewrite the cached prefix only when it pays)', path: ['plan', 'enabled'], type: 'checkbox',
    help: 'Off: observations leave the window in fixed batches of optical.batch.' },
];

function getPath(obj, path) {
  return path.reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

function setPath(obj, path, value) {
  let o = obj;
  for (const k of path.slice(0, -1)) o = o[k] ??= {};
  o[path.at(-1)] = value;
}

/** Builds the controls into `form`; `onChange()` fires on every edit. */
export function buildControls(form, defaults, onChange) {
  for (const c of CONTROLS) {
    const row = document.createElement('div');
    row.className = `control control-${c.type}`;
    const input = document.createElement(c.type === 'select' ? 'select' : 'input');
    input.id = `opt-${c.id}`;
    input.name = c.id;
    input.dataset.path = c.path.join('.');
    const label = document.createElement('label');
    label.htmlFor = input.id;
    label.textContent = c.label;
    if (c.stage) label.dataset.stage = c.stage;
    if (c.type === 'select') {
      for (const v of c.choices) {
        const o = document.createElement('option');
        o.value = v;
        o.textContent = c.names?.[v] ?? v;
        input.append(o);
      }
    } else {
      input.type = c.type;
      if (c.type === 'number') {
        input.inputMode = 'decimal';
        for (const k of ['min', 'max', 'step']) if (c[k] !== undefined) input[k] = String(c[k]);
      }
    }
    if (c.type === 'checkbox') row.append(input, label);
    else row.append(label, input);
    if (c.help) {
      const help = document.createElement('small');
      help.id = `${input.id}-help`;
      help.textContent = c.help;
      input.setAttribute('aria-describedby', help.id);
      row.append(help);
    }
    const error = document.createElement('small');
    error.className = 'control-error';
    error.id = `${input.id}-error`;
    error.setAttribute('role', 'alert');
    row.append(error);
    form.append(row);
    input.addEventListener(c.type === 'number' ? 'input' : 'change', () => onChange(c));
  }
  setControls(form, defaults);
}

/**
 * The settings the bundled sample (the demo session) opens at: `make demo`'s
 * (Makefile DEMO_ARGS), a context window the session fills, so every stage acts.
 */
export const SAMPLE_OPTIONS = Object.freeze({ budget: 16000, model: 'gpt-5' });

/** Puts the settings `options` holds (a full or partial settings object) into their controls. */
export function applyControls(form, options) {
  for (const c of CONTROLS) {
    const v = getPath(options, c.path);
    if (v === undefined) continue;
    const input = form.elements.namedItem(c.id);
    if (c.type === 'checkbox') input.checked = Boolean(v);
    else input.value = v == null ? '' : String(v);
  }
}

/** Puts `options` (a full settings object) into the controls. */
export function setControls(form, options) {
  applyControls(form, options);
}

/**
 * The settings the controls describe, as the subset that differs from `defaults`.
 * Returns `{ options, invalid: [control ids] }`; an empty or non-numeric number
 * field is invalid and leaves its setting at the default.
 */
export function readControls(form, defaults) {
  const options = {};
  const invalid = [];
  for (const c of CONTROLS) {
    const input = form.elements.namedItem(c.id);
    let v;
    if (c.type === 'checkbox') v = input.checked;
    else if (c.type === 'number') {
      v = input.value.trim() === '' ? NaN : Number(input.value);
      if (!Number.isFinite(v)) {
        invalid.push(c.id);
        continue;
      }
    } else if (c.parse) v = c.parse(input.value);
    else v = input.value === '' ? null : input.value;
    if (v !== getPath(defaults, c.path)) setPath(options, c.path, v);
  }
  return { options, invalid };
}

/** The control showing setting `path` (an error's dotted path), if any. */
export function controlForPath(path) {
  if (!path) return undefined;
  return CONTROLS.find((c) => c.path.join('.') === path || path.startsWith(`${c.path.join('.')}.`));
}
