// Cloudflare Workers (workerd) entry: the wasm is imported as a compiled module.
import wasm from '../wasm/tracelite_bg.wasm';
import { initSync } from '../wasm/tracelite.js';

initSync({ module: wasm });

export * from '../core/api.js';
