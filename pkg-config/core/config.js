// Default settings, read from the core so hosts never hard-code them.
import { defaultOptions as wasmDefaultOptions } from '../wasm/tracelite.js';

/**
 * Every setting at its documented default (src/config/ `Config::default()`),
 * in the shape `compress` accepts. A fresh object on every call.
 */
export function defaultOptions() {
  return JSON.parse(wasmDefaultOptions());
}
