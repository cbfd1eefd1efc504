#!/usr/bin/env node
// What the wasm is made of: the shipped module's size (raw, gzip -9), its
// sections, and its code bytes by crate and by TraceLite module, read from
// the function names of the same module built with its name section kept
// (what `twiggy top` shows, in one table). Also the CI ceiling on the gzip
// size. Usage: node bench/size.mjs [--json]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The largest gzip size (-9, Node's zlib) of `pkg/wasm/tracelite_bg.wasm` the
 * tests accept: 667,006 bytes when it was set (issue 40: snapshots rasterized
 * by tiny-skia, 265 KiB of its code, and encoded by the `png` crate, where
 * the hand-written blitter and PNG writer made 524,657) plus about 3.5%, so an
 * accidental dependency or a monomorphization blow-up fails CI while ordinary
 * work does not; raised to 698,437 plus about 1.5% when the hand-written merge
 * sort gave way to the standard library's sorts (issue 36: 17 KiB gzip of
 * driftsort and ipnsort instances); raised to 724,345 plus about 1.5% when
 * the `png` crate's deflate moved from miniz_oxide to zlib-rs (its own
 * `zlib-rs` feature: 18,739 bytes gzip for 2.4x faster snapshot encoding in
 * wasm and 30% smaller PNGs, bench/PNG-ENCODER.md); raised to 744,351 plus
 * about 1.5% when options came to be read by serde's derive instead of field
 * tables (issue 36 item 4: about 11 KB gzip), beside the cache segments' HMAC
 * (`hmac`) and the planner's one phase (about 6 KB together); raised to
 * 767,663 plus about 1.5% when the planner came to price recovery (issue 41
 * item 2: `activity::recall`, `plan::recovery`, +9,351 bytes) and the spill
 * excerpt to index its hidden middle (item 3: `spill::index`, the unlisted
 * failing tests note, +12,446), each measured against 745,534 before them;
 * raised to 790,708 plus about 1.5% when the model capability table came
 * (issue 48: `capability`, the `model`/`models` options, +9,139), the spill
 * excerpt's detectors as data (issue 53: `spill::detectors`, about +14,500)
 * and the counting allocator that weighs what a session keeps (issue 49:
 * `alloc-count`, +3,411), measured against 763,671 before them; raised to
 * 804,080 plus about 1.5% when per-tool rules came (issue 50 item 6:
 * `excludeTools`, `spill.toolCaps` through every stage, about +5,500), errors
 * that say what they got (issue 50 item 7), the `base64` crate's decoder in
 * place of a hand-written one (issue 51, +640) and gemini's `parse_part` split
 * into four functions (+1,268), measured against 792,795 before them;
 * raised to 819,800 plus about 1.5% when salience at arrival came (issue 54:
 * `spill::salience`, its options and their reading, +11,266 after slimming
 * its collections from +17,171), measured against 808,534 before it, itself
 * 804,080 plus the stage contract, one file per options section (issue 51)
 * and the several-tasks shares (issue 52), +4,454. Lower it as the wasm shrinks.
 */
export const GZIP_CEILING = 832_100;

const SECTIONS = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'data count'];

function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  let i = at;
  for (;;) {
    const b = bytes[i++];
    if (b === undefined) throw new Error('truncated LEB128');
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, i];
  }
}

function text(bytes, at) {
  const [len, start] = leb(bytes, at);
  return [new TextDecoder().decode(bytes.subarray(start, start + len)), start + len];
}

/** The sections of a wasm module: `[{ id, name, start, size }]`. */
export function sections(bytes) {
  if (bytes.length < 8 || bytes.readUInt32LE(0) !== 0x6d736100) throw new Error('not a wasm module');
  const out = [];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at];
    const [size, start] = leb(bytes, at + 1);
    const name = id === 0 ? `custom "${text(bytes, start)[0]}"` : (SECTIONS[id] ?? `section ${id}`);
    out.push({ id, name, start, size });
    at = start + size;
  }
  return out;
}

/** Code bytes per function: `[{ index, bytes }]`, indexes counting imported functions first. */
function functionSizes(bytes, secs) {
  let imported = 0;
  const imports = secs.find((s) => s.id === 2);
  if (imports) {
    let [n, at] = leb(bytes, imports.start);
    for (; n > 0; n--) {
      [, at] = text(bytes, at);
      [, at] = text(bytes, at);
      const kind = bytes[at++];
      if (kind === 0) {
        imported++;
        [, at] = leb(bytes, at);
      } else if (kind === 1) {
        at += 1;
        const flags = bytes[at++];
        [, at] = leb(bytes, at);
        if (flags & 1) [, at] = leb(bytes, at);
      } else if (kind === 2) {
        const flags = bytes[at++];
        [, at] = leb(bytes, at);
        if (flags & 1) [, at] = leb(bytes, at);
      } else if (kind === 3) {
        at += 2;
      } else {
        [, at] = leb(bytes, at + 1);
      }
    }
  }
  const code = secs.find((s) => s.id === 10);
  const out = [];
  if (!code) return out;
  let [n, at] = leb(bytes, code.start);
  for (let i = 0; i < n; i++) {
    const [size, body] = leb(bytes, at);
    out.push({ index: imported + i, bytes: body - at + size });
    at = body + size;
  }
  return out;
}

/** Function names from the `name` section (subsection 1): `Map<index, name>`. */
function functionNames(bytes, secs) {
  const names = new Map();
  const sec = secs.find((s) => s.id === 0 && s.name === 'custom "name"');
  if (!sec) return names;
  let [, at] = text(bytes, sec.start);
  const end = sec.start + sec.size;
  while (at < end) {
    const kind = bytes[at];
    const [size, start] = leb(bytes, at + 1);
    if (kind === 1) {
      let [n, p] = leb(bytes, start);
      for (; n > 0; n--) {
        let index;
        let name;
        [index, p] = leb(bytes, p);
        [name, p] = text(bytes, p);
        names.set(index, name);
      }
    }
    at = start + size;
  }
  return names;
}

/**
 * The crate a demangled function name belongs to: the first path of the name
 * (`<tracelite::dedup::Dedup as …>::apply` → tracelite), its module as well
 * for TraceLite's own code (`tracelite::formats`).
 */
export function owner(name) {
  const m = /^[<&\s]*(?:mut |dyn |const )?([A-Za-z_][A-Za-z0-9_]*)(?:\[[0-9a-f]+\])?(?:::([A-Za-z_][A-Za-z0-9_]*))?/.exec(name);
  if (!m) return { crate: '(other)', module: null };
  const crate = m[1];
  const known = /^(?:[a-z][a-z0-9_]*)$/.test(crate) && m[2] !== undefined;
  if (!known) return { crate: '(other)', module: null };
  return { crate, module: crate === 'tracelite' ? `tracelite::${m[2]}` : null };
}

function sum(map, key, bytes) {
  map.set(key, (map.get(key) ?? 0) + bytes);
}

/** Code bytes of a module with a name section, by crate and by TraceLite module. */
export function breakdown(bytes) {
  const secs = sections(bytes);
  const names = functionNames(bytes, secs);
  const byCrate = new Map();
  const byModule = new Map();
  let named = 0;
  let total = 0;
  for (const f of functionSizes(bytes, secs)) {
    total += f.bytes;
    const name = names.get(f.index);
    if (name === undefined) {
      sum(byCrate, '(unnamed)', f.bytes);
      continue;
    }
    named += f.bytes;
    const { crate, module } = owner(name);
    sum(byCrate, crate, f.bytes);
    if (module) sum(byModule, module, f.bytes);
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k, v]) => ({ name: k, bytes: v }));
  return { codeBytes: total, namedBytes: named, byCrate: sorted(byCrate), byModule: sorted(byModule) };
}

/**
 * The size report: the shipped wasm (`pkg/wasm/tracelite_bg.wasm`) and, when the
 * linked module and the wasm-bindgen CLI are there, its code by crate and module.
 */
export function wasmReport({ root = ROOT } = {}) {
  const shipped = readFileSync(join(root, 'pkg/wasm/tracelite_bg.wasm'));
  const report = {
    rawBytes: shipped.length,
    gzipBytes: gzipSync(shipped, { level: 9 }).length,
    ceilingGzipBytes: GZIP_CEILING,
    sections: sections(shipped).map(({ name, size }) => ({ name, bytes: size })),
  };
  const linked = join(root, 'target/wasm32-unknown-unknown/release/tracelite.wasm');
  const bindgen = join(root, '.tools/bin/wasm-bindgen');
  if (existsSync(linked) && existsSync(bindgen)) {
    const dir = mkdtempSync(join(tmpdir(), 'tracelite-size-'));
    try {
      // The same wasm-bindgen run as `make pkg`, names kept.
      execFileSync(bindgen, ['--target', 'web', '--out-dir', dir, '--out-name', 'named', linked]);
      report.code = breakdown(readFileSync(join(dir, 'named_bg.wasm')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return report;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = wasmReport();
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  } else {
    const kb = (b) => `${(b / 1024).toFixed(1)} KiB`;
    process.stdout.write(`wasm: ${r.rawBytes} bytes raw, ${r.gzipBytes} gzip (ceiling ${r.ceilingGzipBytes})\n`);
    for (const s of r.sections) process.stdout.write(`  ${s.name.padEnd(34)} ${kb(s.bytes).padStart(11)}\n`);
    if (r.code) {
      process.stdout.write('code by crate:\n');
      for (const c of r.code.byCrate.slice(0, 15)) process.stdout.write(`  ${c.name.padEnd(34)} ${kb(c.bytes).padStart(11)}\n`);
      process.stdout.write('TraceLite code by module:\n');
      for (const c of r.code.byModule) process.stdout.write(`  ${c.name.padEnd(34)} ${kb(c.bytes).padStart(11)}\n`);
    }
  }
}
