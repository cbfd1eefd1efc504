// Browser entry: fetch and instantiate the wasm next to this module.
import init from '../wasm/tracelite.js';

await init({ module_or_path: new URL('../wasm/tracelite_bg.wasm', import.meta.url) });

export * from '../core/api.js';
