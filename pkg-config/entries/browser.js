// Browser entry: fetch and instantiate the wasm next to this module.
import init from './tracelite.js';

await init({ module_or_path: new URL('./tracelite_bg.wasm', import.meta.url) });

export * from './api.js';
