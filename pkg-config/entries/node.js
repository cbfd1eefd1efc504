// Node entry: instantiate the wasm synchronously from the file next to this one.
import { readFileSync } from 'node:fs';
import { initSync } from '../wasm/tracelite.js';

initSync({ module: readFileSync(new URL('../wasm/tracelite_bg.wasm', import.meta.url)) });

export * from '../core/api.js';
