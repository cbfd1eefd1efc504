// The core's secret redactor on its own (src/redact.rs through src/wasm/redact.rs),
// for text the pipeline did not take: a request the proxy forwards without
// compressing it, spilled text served under `redact.store`. Relative imports
// only; the host entry that initializes the wasm must be loaded first.
import { redactText as wasmRedactText } from '../wasm/tracelite.js';
import { InputError, guarded, describe } from './errors.js';

/**
 * Masks secrets in `text` as the core masks them in excerpts (`[REDACTED:<kind>]`).
 * Returns `{ text, count, kinds }`; `kinds` name detectors, never values.
 */
export function redactText(text) {
  if (typeof text !== 'string') throw new InputError(`must be a string, got ${describe(text)}`, 'INVALID_REQUEST', 'text');
  return JSON.parse(guarded(() => wasmRedactText(text)));
}

/**
 * Masks secrets in every string value of a parsed JSON value (object keys are
 * kept), in place where it can. Returns `{ value, count, kinds }`.
 */
export function redactJson(value) {
  let count = 0;
  const kinds = new Set();
  const mask = (v) => {
    const r = redactText(v);
    if (r.count === 0) return v;
    count += r.count;
    for (const k of r.kinds) kinds.add(k);
    return r.text;
  };
  if (typeof value === 'string') return { value: mask(value), count, kinds: [...kinds] };
  // An explicit stack: JSON.parse accepts nesting deeper than a recursive walk could go.
  const stack = value !== null && typeof value === 'object' ? [value] : [];
  while (stack.length) {
    const node = stack.pop();
    for (const k of Array.isArray(node) ? node.keys() : Object.keys(node)) {
      const v = node[k];
      if (typeof v === 'string') node[k] = mask(v);
      else if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
  return { value, count, kinds: [...kinds] };
}
