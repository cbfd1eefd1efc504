// Every ```js / ```ts block of README.md and pkg-config/README.md is type-checked
// under tsc --strict against the package's types (and the real SDKs') and run
// against fakes, by exactly one suite (tests/js/support/readme-snippets.mjs):
// the AI SDK, LangChain and OpenAI Agents blocks by types.test.mjs, the provider
// SDK loops by sdk-loop.test.mjs, and the rest here: `compress`, `compressAsync`
// (its summarizer's fetch answered by a stub), `TraceLite`, the trajectory
// replay, and the Workers (run in workerd against a stub provider). A block
// marked `<!-- snippet: partial -->` is counted as skipped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorker, pkgDir, projectWithPkg, root, startUpstream, startWorker } from './support/hosts.mjs';
import { PATHS, bigOutput, clientText, conversation, model } from './support/proxy-tools.mjs';
import { NODE_22, PARTIAL, readmeSnippets, suiteOf, suiteSnippets } from './support/readme-snippets.mjs';

const TSC = join(root, 'node_modules/typescript/bin/tsc');
/** Where each suite's blocks are compiled and run. */
const SUITES = {
  'ai-sdk': 'tests/js/types.test.mjs',
  langchain: 'tests/js/types.test.mjs',
  'openai-agents': 'tests/js/types.test.mjs',
  'sdk-loop': 'tests/js/sdk-loop.test.mjs',
  readme: 'tests/js/readme-snippets.test.mjs',
};
const SNIPPETS = suiteSnippets('readme');
/** A Worker module (`export default { fetch(request, env) }`): run in workerd. */
const isWorker = (code) => /^export default \{[\s\S]*?\bfetch\(request\b/m.test(code);

// The blocks define what they use (or take it from their README's prelude, shown
// there): nothing is left to the reader. Only the summarizer's model call is a stub.
const SUMMARY = ['## Goal', 'Fix the discount test.', '## Progress', 'Ran the tests.', '## Key facts', 'KeyError: price.',
  '## Decisions', 'Fix the key.', '## Next steps', 'Edit shop/price.py.'].join('\n');

// Node blocks: console.log captured, fetch answered by a stub model (the summarizer's call).
const RUN_MJS = (snippet) => `
const printed = [];
const fetched = [];
const log = console.log;
console.log = (...args) => printed.push(args.map((a) => (typeof a === 'object' ? JSON.stringify(a) : String(a))).join(' '));
globalThis.fetch = async (url, init) => {
  fetched.push({ url: String(url), body: JSON.parse(init.body) });
  return Response.json({ choices: [{ message: { role: 'assistant', content: ${JSON.stringify(SUMMARY)} } }] });
};
await import(${JSON.stringify(`./${snippet}`)});
log(JSON.stringify({ printed, fetched: fetched.map((f) => f.url) }));
`;

let work;

before(() => {
  work = mkdtempSync(join(tmpdir(), 'tracelite-readme-'));
  const modules = join(work, 'node_modules');
  mkdirSync(join(modules, '@types'), { recursive: true });
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  cpSync(pkgDir, join(modules, 'tracelite'), { recursive: true, filter: (src) => !src.includes('node_modules') });
  for (const dep of ['openai', '@types/node']) symlinkSync(join(root, 'node_modules', dep), join(modules, dep), 'dir');
  SNIPPETS.forEach((s, i) => {
    // A ```js block is checked as JavaScript (checkJs), a ```ts block as TypeScript.
    writeFileSync(join(work, `snippet-${i}.${s.lang === 'ts' ? 'ts' : 'js'}`), s.code);
    writeFileSync(join(work, `snippet-${i}.mjs`), s.code);
    writeFileSync(join(work, `run-${i}.mjs`), RUN_MJS(`snippet-${i}.mjs`));
  });
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

let typeErrors;
/** tsc --strict over every block of this suite, once; its diagnostics. */
function tscErrors() {
  if (typeErrors === undefined) {
    const files = [...SNIPPETS.map((s, i) => `snippet-${i}.${s.lang === 'ts' ? 'ts' : 'js'}`)];
    try {
      execFileSync(process.execPath, [TSC, '--strict', '--allowJs', '--checkJs', '--noEmit', '--target', 'es2022', '--module', 'nodenext',
        '--moduleResolution', 'nodenext', '--lib', 'es2022,dom,esnext.disposable', ...files], { cwd: work, encoding: 'utf8' });
      typeErrors = '';
    } catch (err) {
      typeErrors = `${err.stdout}${err.stderr}`;
    }
  }
  return typeErrors;
}

test('every README code block is compiled and run by one suite, or marked partial', (t) => {
  const all = readmeSnippets();
  const partial = all.filter((s) => s.partial);
  const bySuite = {};
  for (const s of all.filter((x) => !x.partial)) (bySuite[suiteOf(s.code)] ??= []).push(s);
  for (const suite of Object.keys(SUITES)) assert.ok(bySuite[suite]?.length >= 1, `no README block for ${suite} (${SUITES[suite]})`);
  assert.deepEqual(Object.keys(bySuite).sort(), Object.keys(SUITES).sort());
  const compiled = all.length - partial.length;
  t.diagnostic(`${all.length} README code blocks: ${compiled} compiled and run, ${partial.length} partial (skipped, marked ${PARTIAL})`);
  for (const [suite, blocks] of Object.entries(bySuite)) t.diagnostic(`${suite} (${SUITES[suite]}): ${blocks.map((s) => s.name).join(', ')}`);
  assert.ok(compiled >= 15, `only ${compiled} README blocks compiled`);
});

for (const [i, s] of SNIPPETS.entries()) {
  const worker = isWorker(s.code);
  test(`README block ${s.name} type-checks under tsc --strict and runs ${worker ? 'in workerd against a stub provider' : 'against stubs'}`, async () => {
    const errors = tscErrors().split('\n').filter((l) => l.startsWith(`snippet-${i}.`));
    assert.deepEqual(errors, [], `tsc --strict on ${s.name}:\n${tscErrors()}`);
    if (worker) {
      await runWorker(s);
      return;
    }
    const got = JSON.parse(execFileSync(process.execPath, [`run-${i}.mjs`], { cwd: work, encoding: 'utf8' }).trim().split('\n').pop());
    assert.ok(got.printed.length >= 1, `${s.name} printed nothing`);
    for (const line of got.printed) assert.doesNotMatch(line, /undefined|NaN|\[object /, `${s.name} printed ${line}`);
    if (/summarizer:/.test(s.code)) {
      assert.deepEqual(got.fetched, ['https://api.openai.com/v1/chat/completions'], 'the summarizer was asked once');
      assert.equal(got.printed.at(-1), 'summarizer', 'the summary adopted is the model\'s');
    }
  });
}

/** Bundles a Worker block, runs it in workerd with its bindings, and sends it an Anthropic turn with a spilled log. */
async function runWorker(s) {
  const NEEDLE = 'NEEDLE: the linker cannot find -lssl';
  const upstream = await startUpstream(model);
  const durable = /SPILL_OBJECTS/.test(s.code);
  const mf = await startWorker(await bundleWorker(projectWithPkg('tracelite-readme-worker-'), s.code, undefined, s.lang === 'ts' ? 'worker-src.ts' : 'worker-src.js'), {
    bindings: { UPSTREAM: upstream.url, TRACELITE_SECRET: 'readme-snippet-secret-0123456789abcdef' },
    kvNamespaces: ['SPILLS'],
    ...(durable ? { durableObjects: { SPILL_OBJECTS: 'TraceLiteSpillObject' } } : {}),
  });
  try {
    const res = await mf.dispatchFetch(`http://proxy.test${PATHS.anthropic}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-readme-test' },
      body: JSON.stringify(conversation('anthropic', bigOutput(NEEDLE))),
    });
    assert.equal(res.status, 200);
    const [before, after] = res.headers.get('x-tracelite-tokens').split('->').map(Number);
    assert.ok(after < before / 5, `compressed: ${before} -> ${after}`);
    // The stub model grepped the spill (the proxy answered it) before answering.
    assert.equal(clientText('anthropic', await res.text(), false), `final: ${NEEDLE}`);
    assert.equal(upstream.received.length, 2);
  } finally {
    await mf.dispose();
    await upstream.close();
  }
}

/** The package README's "Supported versions" table: `{ what: [supported, tested] }`. */
function supportedVersions() {
  const text = readFileSync(join(root, 'pkg-config/README.md'), 'utf8');
  const section = /^## Supported versions\n([\s\S]*?)\n## /m.exec(text)?.[1];
  assert.ok(section, 'pkg-config/README.md has no "Supported versions" section');
  const rows = [...section.matchAll(/^\| (.+?) \| (.+?) \| (.+?) \|$/gm)].slice(1); // after the header
  return Object.fromEntries(rows.map(([, what, supported, tested]) => [what.replaceAll('`', ''), [supported, tested.split(', ')]]));
}

const installed = (name) => JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
const minor = (version) => version.replace(/^v/, '').split('.').slice(0, 2).join('.');

test('the supported versions the package README states are engines and the optional peers, and the tested ones are those installed', () => {
  const table = supportedVersions();
  const manifest = JSON.parse(readFileSync(join(root, 'pkg-config/package.json'), 'utf8'));
  const dev = JSON.parse(readFileSync(join(root, 'pkg-config/dev/package.json'), 'utf8'));
  const floor = (cell) => /^≥ ([\d.]+)/.exec(cell)?.[1];
  assert.equal(`>=${floor(table['Node.js'][0])}`, manifest.engines.node);
  assert.equal(dev.engines.node, manifest.engines.node, 'the dev install runs on the Node the package supports');
  for (const peer of Object.keys(manifest.peerDependencies)) assert.equal(`>=${floor(table[peer]?.[0])}`, manifest.peerDependencies[peer], peer);
  // The Node each package needs, as it (or, for the Agents SDK, the `openai` it depends on) declares it.
  const engines = (at) => JSON.parse(readFileSync(join(root, 'node_modules', at, 'package.json'), 'utf8')).engines.node;
  const agentsOpenai = existsSync(join(root, 'node_modules/@openai/agents/node_modules/openai')) ? '@openai/agents/node_modules/openai' : 'openai';
  for (const [what, at] of [['ai', 'ai'], ['openai', 'openai'], ['langchain', 'langchain'], ['@openai/agents', agentsOpenai]]) {
    assert.equal(/needs Node ≥ (\d+)/.exec(table[what][0])?.[1], /^>=\s*(\d+)/.exec(engines(at))[1], what);
  }
  const tested = {
    'Node.js': [process.version, execFileSync(NODE_22, ['-p', 'process.version'], { encoding: 'utf8' }).trim()],
    ai: [installed('ai-v6'), installed('ai')],
    langchain: [installed('langchain')],
    '@openai/agents': [installed('@openai/agents')],
    openai: [installed('openai')],
    '@anthropic-ai/sdk': [installed('@anthropic-ai/sdk')],
    typescript: [installed('typescript')],
    redis: [installed('redis')],
  };
  assert.deepEqual(Object.keys(table).sort(), Object.keys(tested).sort());
  for (const [what, versions] of Object.entries(tested)) {
    // Node by major (the machine's own Node is not pinned), packages by minor (the lock pins them).
    const shown = versions.map((v) => (what === 'Node.js' ? minor(v).split('.')[0] : minor(v)));
    assert.deepEqual(table[what][1], shown, `${what}: the README says tested with ${table[what][1]}, the tests run ${versions}`);
    // What is tested is within what is supported.
    const least = floor(table[what][0]);
    for (const v of versions) assert.ok(Number(minor(v).split('.')[0]) > Number(least.split('.')[0]) || minor(v) >= least, `${what} ${v} < ${least}`);
  }
});
