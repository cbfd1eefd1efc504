// Vercel Edge (`edge-light` condition) entry: Edge Functions forbid compiling
// wasm from bytes at run time, so the module comes from a `?module` import,
// which the Vercel/Next.js bundler turns into a WebAssembly.Module.
import wasm from '../wasm/tracelite_bg.wasm?module';
import { initSync } from '../wasm/tracelite.js';

initSync({ module: wasm });

export * from '../core/api.js';
