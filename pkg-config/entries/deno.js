// Deno entry (`deno` condition): the wasm comes from a source-phase import,
// which Deno's module loader resolves like any other import (Deno ≥ 2.6), so
// loading the package needs no permission at all: no --allow-read of the
// package directory, no fetch of a file: URL, no env or net access.
import source wasm from '../wasm/tracelite_bg.wasm';
import { initSync } from '../wasm/tracelite.js';

initSync({ module: wasm });

export * from '../core/api.js';
