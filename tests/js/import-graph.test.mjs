// Issue 36 item 6: the JS glue (pkg-config/), the playground (www/) and the
// Node scripts both the bench and the playground's server use (scripts/) have
// no import cycle, www/ never loads the benchmark's code (bench/), not even
// through scripts/, and no
// function of the proxy (pkg-config/adapters/proxy/) is longer than
// MAX_PROXY_FUNCTION_LINES. Imports are read by TypeScript's parser:
// `import … from`, `export … from`, literal `import('…')`; `#entry` resolves
// through pkg-config/package.json `imports`, `pkg/…` to the pkg-config/ file
// it is built from (the built wasm is no source file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cyclesOf, functionLengths, importGraph, shown, sourceFiles, specifiersOf } from './support/source-graph.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const PKG = join(root, 'pkg-config');
const WWW = join(root, 'www');
const BENCH = join(root, 'bench');
const SCRIPTS = join(root, 'scripts');
const BUILT = join(root, 'pkg');
/** Longest function allowed in the proxy (lines, first to last). */
const MAX_PROXY_FUNCTION_LINES = 100;
const WASM = [join(PKG, 'wasm') + sep, join(BUILT, 'wasm') + sep];

const manifest = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
const inside = (dir, path) => path === dir || path.startsWith(dir + sep);

/** Package `imports` (`#entry`) to the Node condition's file; anything else as it is. */
function mapSpecifier(spec, from) {
  if (spec.startsWith('#')) {
    const entry = manifest.imports?.[spec];
    return entry === undefined ? undefined : join(PKG, entry.node ?? entry.default);
  }
  // The playground loads the built package as ./pkg/ (www/serve.mjs): its source is pkg-config/.
  if (inside(WWW, from) && spec.startsWith('./pkg/')) return join(PKG, spec.slice('./pkg/'.length));
  return spec;
}

/** A path into the built package stands for its pkg-config/ source. */
function mapBuilt(graph) {
  for (const [file, edges] of graph) {
    graph.set(file, new Set([...edges].map((p) => (inside(BUILT, p) ? join(PKG, relative(BUILT, p)) : p))));
  }
  return graph;
}

const isWasm = (path) => WASM.some((dir) => path.startsWith(dir)) || inside(BUILT, path);

function repositoryGraph() {
  const files = [...sourceFiles(PKG).filter((f) => !inside(join(PKG, 'dev'), f)), ...sourceFiles(WWW), ...sourceFiles(SCRIPTS)];
  const { graph, missing } = importGraph(files, { map: mapSpecifier, optional: isWasm });
  return { graph: mapBuilt(graph), missing };
}

test('the checker finds every kind of import and a cycle through them (synthetic files)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-import-graph-'));
  try {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'a.js'), "import { b } from './sub/b.js';\nexport const a = () => b;\n");
    writeFileSync(join(dir, 'sub', 'b.js'), "export * from '../c.js';\nexport const b = 1;\n");
    // A template literal mentioning an import is text, not an import.
    writeFileSync(join(dir, 'c.js'), "const snippet = `import { x } from './d.js'`;\nexport const c = () => import('./a.js');\n");
    writeFileSync(join(dir, 'd.js'), "import './c.js';\n");
    const files = [join(dir, 'a.js'), join(dir, 'sub', 'b.js'), join(dir, 'c.js'), join(dir, 'd.js')];
    const { graph, missing } = importGraph(files);
    assert.deepEqual(missing, []);
    const cycles = cyclesOf(graph).map((c) => shown(dir, c).join(' -> '));
    assert.deepEqual(cycles, ['a.js -> sub/b.js -> c.js -> a.js']);
    // Breaking one edge breaks the cycle.
    writeFileSync(join(dir, 'c.js'), 'export const c = 3;\n');
    assert.deepEqual(cyclesOf(importGraph(files).graph), []);
    writeFileSync(join(dir, 'd.js'), "import { gone } from './gone.js';\n");
    assert.deepEqual(importGraph(files).missing.map(([from, spec]) => [shown(dir, [from])[0], spec]), [['d.js', './gone.js']]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the function length measure counts a function from its first line to its last', () => {
  const text = 'export function outer() {\n  const inner = () => {\n    return 1;\n  };\n  return inner;\n}\nclass K {\n  m() { return 2; }\n}\n';
  assert.deepEqual(functionLengths(text).map(({ name, lines }) => `${name}:${lines}`), ['outer:6', 'inner:3', 'm:1']);
  assert.deepEqual(specifiersOf("export { x } from './x.js';\nconst y = await import(`./y.js`);\n"), ['./x.js', './y.js']);
});

test('pkg-config/, www/ and scripts/ have no import cycle and no import of a missing file', () => {
  const { graph, missing } = repositoryGraph();
  assert.ok(graph.size > 40, `only ${graph.size} files read`);
  assert.ok([...graph.keys()].some((f) => inside(SCRIPTS, f)), 'scripts/ is read');
  const cycles = cyclesOf(graph).map((c) => shown(root, c).join(' -> '));
  assert.deepEqual(cycles, [], `import cycles:\n${cycles.join('\n')}`);
  assert.deepEqual(missing.map(([from, spec]) => `${shown(root, [from])[0]}: ${spec}`), []);
});

/** Paths from a www/ file into bench/, through any file the graph reads (scripts/ too). */
function pathsIntoBench(graph) {
  const out = [];
  for (const start of [...graph.keys()].filter((f) => inside(WWW, f))) {
    const seen = new Set([start]);
    const queue = [[start]];
    while (queue.length > 0) {
      const path = queue.shift();
      for (const to of graph.get(path.at(-1)) ?? []) {
        if (inside(BENCH, to)) out.push(shown(root, [...path, to]).join(' -> '));
        else if (!seen.has(to)) {
          seen.add(to);
          queue.push([...path, to]);
        }
      }
    }
  }
  return out;
}

test('www/ never imports the benchmark (bench/), directly or through scripts/, nor serves it', () => {
  const { graph } = repositoryGraph();
  assert.deepEqual(pathsIntoBench(graph), []);
  // The check follows imports through other files: a scripts/ module importing bench/ is caught.
  const probe = new Map(graph);
  const server = join(WWW, 'ocr-endpoint.mjs');
  const shared = join(SCRIPTS, 'tesseract.mjs');
  assert.ok(probe.get(server)?.has(shared), 'www/ocr-endpoint.mjs imports scripts/tesseract.mjs');
  probe.set(shared, new Set([...probe.get(shared), join(BENCH, 'ocr.mjs')]));
  assert.ok(pathsIntoBench(probe).some((p) => p.endsWith('scripts/tesseract.mjs -> bench/ocr.mjs')), pathsIntoBench(probe).join('\n'));
  // The static server maps URL paths to files: none of them into bench/.
  assert.doesNotMatch(readFileSync(join(WWW, 'serve.mjs'), 'utf8'), /['"]bench['"]|\bbench\//);
});

test(`no function of the proxy is over ${MAX_PROXY_FUNCTION_LINES} lines`, () => {
  const dir = join(PKG, 'adapters', 'proxy');
  const long = [];
  for (const file of sourceFiles(dir).filter((f) => !f.endsWith('.test.mjs'))) {
    for (const f of functionLengths(readFileSync(file, 'utf8'), file)) {
      if (f.lines > MAX_PROXY_FUNCTION_LINES) long.push(`${shown(root, [file])[0]}:${f.line} ${f.name} (${f.lines} lines)`);
    }
  }
  assert.deepEqual(long, []);
});

/**
 * The package's folders, lowest first: a module imports only from its own
 * folder or a lower one. core/ is the API over the wasm (it never reaches
 * into internal/ or an adapter); internal/ is what several adapters share;
 * entries/ initialize the wasm per host and re-export core/; adapters/ build on
 * all of them; cli/ and examples/ are the package's own users.
 */
const PACKAGE_LAYERS = ['wasm', 'core', 'internal', 'entries', 'adapters', 'cli', 'examples'];

/** The layer of a pkg-config/ file (its first folder), or undefined outside the package's layers. */
function layerOf(file) {
  if (!inside(PKG, file) || isWasm(file)) return isWasm(file) ? 0 : undefined;
  const i = PACKAGE_LAYERS.indexOf(relative(PKG, file).split(sep)[0]);
  return i < 0 ? undefined : i;
}

/** Imports from a package folder into a higher one: `from -> to`. */
function upwardImports(graph) {
  const out = [];
  for (const [from, edges] of graph) {
    const own = layerOf(from);
    if (own === undefined || from.endsWith('.test.mjs')) continue;
    for (const to of edges) {
      const layer = layerOf(to);
      if (layer !== undefined && layer > own) out.push(shown(root, [from, to]).join(' -> '));
    }
  }
  return out.sort();
}

test(`pkg-config/ is layered ${PACKAGE_LAYERS.join(' < ')}: no module imports from a higher folder`, () => {
  const { graph } = repositoryGraph();
  assert.deepEqual(upwardImports(graph), []);
  // The check sees an upward import: core/compress.js importing an internal/ module is caught.
  const probe = new Map(graph);
  const compressJs = join(PKG, 'core', 'compress.js');
  probe.set(compressJs, new Set([...probe.get(compressJs), join(PKG, 'internal', 'framework.js')]));
  assert.deepEqual(upwardImports(probe), ['pkg-config/core/compress.js -> pkg-config/internal/framework.js']);
});
