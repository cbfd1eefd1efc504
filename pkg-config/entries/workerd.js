// Cloudflare Workers (workerd) entry: the wasm is imported as a compiled module.
import wasm from './tracelite_bg.wasm';
import { initSync } from './tracelite.js';

initSync({ module: wasm });

export * from './api.js';
