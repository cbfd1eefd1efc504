// Optical snapshots: render a text as the optical stage would (preview, benchmarks).
import { renderSnapshot as wasmRenderSnapshot } from '../wasm/tracelite.js';
import { InputError, guarded, jsonArg, describe } from './errors.js';
import { splitOptions } from './options.js';

/**
 * Renders `text` to PNG images for `options.provider` with `options.optical`.
 * Returns `null` when there is nothing to draw, else
 * `{ fontPx, columns, rows, lines, missing, imageTokens, images: [{ width, height, mediaType, data }] }`.
 */
export function renderSnapshot(text, options = {}) {
  if (typeof text !== 'string') {
    throw new InputError(`must be a string, got ${describe(text)}`, 'INVALID_REQUEST', 'text');
  }
  const { settings } = splitOptions(options);
  return JSON.parse(guarded(() => wasmRenderSnapshot(text, jsonArg(settings, 'options'))));
}
