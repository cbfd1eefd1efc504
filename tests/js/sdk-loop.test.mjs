// Plain provider SDK loops (no framework): the examples in
// pkg-config/examples/sdk-loop/ run against stub clients shaped like the OpenAI
// and Anthropic SDKs (`chat.completions.create`, `messages.create`), the README's
// loop recipe runs as written (and type-checks under tsc --strict), and the
// Anthropic format keeps top-level fields it does not know (`context_management`,
// Anthropic's server-side context editing) through compress.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pkgDir, root } from './support/hosts.mjs';
import { SpillStore, compress } from '../../pkg/entries/node.js';

const LOG = Array.from({ length: 4000 }, (_, i) => (i === 2717
  ? 'FAILED tests/test_price.py::test_discount - KeyError: price'
  : `tests/test_mod_${i % 37}.py::test_case_${i} PASSED`)).join('\n');
const POINTER = /spill:\/\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+/;
const CONTEXT_MANAGEMENT = {
  edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 180000 }, exclude_tools: ['read_spill', 'grep_spill'] }],
};

let work;

before(() => {
  // The examples import 'tracelite': a project with the built package installed.
  work = mkdtempSync(join(tmpdir(), 'tracelite-sdk-loop-'));
  mkdirSync(join(work, 'node_modules'));
  cpSync(pkgDir, join(work, 'node_modules', 'tracelite'), { recursive: true, filter: (src) => !src.includes('node_modules') });
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const example = (name) => import(join(work, 'node_modules/tracelite/examples/sdk-loop', name));

/** The text of the last tool reply in an OpenAI-chat history. */
const lastTool = (messages) => messages.filter((m) => m.role === 'tool').at(-1)?.content;

test('examples/sdk-loop/openai.mjs: a stub OpenAI client sees the output spilled, grep_spill gets the hidden line', async () => {
  const { agentLoop } = await example('openai.mjs');
  const bodies = [];
  const client = {
    chat: {
      completions: {
        async create(body) {
          bodies.push(structuredClone(body));
          const text = JSON.stringify(body.messages);
          const message = (tool_calls, content = null) => ({ choices: [{ message: { role: 'assistant', content, ...(tool_calls ? { tool_calls } : {}), refusal: null } }] });
          if (bodies.length === 1) return message([{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command":"pytest -v"}' } }]);
          if (bodies.length === 2) {
            const args = JSON.stringify({ pointer: POINTER.exec(text)[0], pattern: 'KeyError', context: 0 });
            return message([{ id: 'call_2', type: 'function', function: { name: 'grep_spill', arguments: args } }]);
          }
          return message(undefined, 'The discount test fails with KeyError: price.');
        },
      },
    },
  };
  const reports = [];
  const bashTool = { type: 'function', function: { name: 'bash', description: 'Runs a command.', parameters: { type: 'object', properties: { command: { type: 'string' } } } } };
  const { text, messages } = await agentLoop(client, {
    model: 'gpt-4.1', system: 'You fix bugs.', task: 'Fix the failing discount test.', tools: [bashTool],
    runTool: async (name, args) => (name === 'bash' && args.command === 'pytest -v' ? LOG : 'unknown'),
    budget: 8000, onReport: (r) => reports.push(r),
  });
  assert.equal(text, 'The discount test fails with KeyError: price.');
  assert.equal(bodies.length, 3);
  assert.deepEqual(bodies[0].tools.map((t) => t.function.name), ['bash', 'read_spill', 'grep_spill']);
  const second = JSON.stringify(bodies[1]);
  assert.match(second, POINTER);
  assert.ok(second.length < LOG.length / 10, `the request was compressed (${second.length} chars)`);
  assert.equal(bodies[1].messages.find((m) => m.role === 'tool').tool_call_id, 'call_1');
  assert.match(lastTool(messages), /: 1 matching lines of 4000 for "KeyError"; showing matches 1-1\n2718:FAILED tests\/test_price\.py::test_discount - KeyError: price/);
  // The loop's own history keeps the full output.
  assert.equal(messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_1').content, LOG);
  assert.ok(reports[1].tokensBefore > 40000 && reports[1].tokensAfter < 4000);
});

test('examples/sdk-loop/anthropic.mjs: a stub Anthropic client gets context_management unchanged, a cache breakpoint, and read_spill replies', async () => {
  const { agentLoop } = await example('anthropic.mjs');
  const bodies = [];
  const client = {
    messages: {
      async create(body) {
        bodies.push(structuredClone(body));
        const reply = (content, stop_reason) => ({ id: `msg_${bodies.length}`, type: 'message', role: 'assistant', content, stop_reason });
        if (bodies.length === 1) return reply([{ type: 'text', text: 'Running the tests.' }, { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'pytest -v' } }], 'tool_use');
        if (bodies.length === 2) {
          const pointer = POINTER.exec(JSON.stringify(body.messages))[0];
          return reply([{ type: 'tool_use', id: 'toolu_2', name: 'read_spill', input: { pointer, offset: 2717, limit: 1 } }], 'tool_use');
        }
        if (bodies.length === 3) return reply([{ type: 'tool_use', id: 'toolu_3', name: 'grep_spill', input: { pointer: 'spill://x/tool-1', pattern: '(' } }], 'tool_use');
        return reply([{ type: 'text', text: 'KeyError: price in the discount test.' }], 'end_turn');
      },
    },
  };
  const { text, messages } = await agentLoop(client, {
    model: 'claude-sonnet-4-5', system: 'You fix bugs.', task: 'Fix the failing discount test.',
    tools: [{ name: 'bash', description: 'Runs a command.', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
    runTool: async () => LOG, budget: 8000,
    extra: { context_management: CONTEXT_MANAGEMENT },
  });
  assert.equal(text, 'KeyError: price in the discount test.');
  assert.equal(bodies.length, 4);
  for (const body of bodies) assert.deepEqual(body.context_management, CONTEXT_MANAGEMENT);
  assert.deepEqual(bodies[0].tools.map((t) => t.name), ['bash', 'read_spill', 'grep_spill']);
  assert.equal(bodies[1].system, 'You fix bugs.');
  const second = JSON.stringify(bodies[1].messages);
  assert.match(second, POINTER);
  assert.ok(second.length < LOG.length / 10);
  assert.match(second, /"cache_control":\{"type":"ephemeral"\}/, 'TraceLite put a prompt-cache breakpoint');
  const results = messages.filter((m) => m.role === 'user' && Array.isArray(m.content)).map((m) => m.content[0]);
  assert.equal(results[0].tool_use_id, 'toolu_1');
  assert.equal(results[0].content, LOG);
  assert.match(results[1].content, /\n {2}2718\tFAILED tests\/test_price\.py::test_discount - KeyError: price\n/);
  assert.equal(results[1].is_error, undefined);
  // A mistake (bad pointer, bad regex) is an error result the model can act on.
  assert.equal(results[2].is_error, true);
});

test('anthropic format: unknown top-level fields (context_management, container, metadata) pass through compress unchanged', () => {
  const request = {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    context_management: CONTEXT_MANAGEMENT,
    container: 'container_abc',
    metadata: { user_id: 'u-1' },
    system: [{ type: 'text', text: 'You fix bugs.' }],
    messages: [
      { role: 'user', content: 'Fix it.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'bash', input: { command: 'pytest' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: LOG }] },
    ],
  };
  const out = compress(request, { budget: 8000, store: new SpillStore(), session: 's' });
  assert.equal(out.report.format, 'anthropic');
  assert.ok(out.report.tokensAfter < out.report.tokensBefore / 5);
  assert.deepEqual(out.request.context_management, CONTEXT_MANAGEMENT);
  assert.equal(out.request.container, 'container_abc');
  assert.deepEqual(out.request.metadata, { user_id: 'u-1' });
  assert.deepEqual(Object.keys(out.request), Object.keys(request), 'same fields, same order');
  // Text in, text out: the JSON text form keeps them too.
  const fromText = compress(JSON.stringify(request), { budget: 8000, store: new SpillStore(), session: 's' });
  assert.deepEqual(fromText.request.context_management, CONTEXT_MANAGEMENT);
});

// The README recipe for plain SDK loops: code blocks using `client.messages.create` or
// `client.chat.completions.create` with handleToolCall, run with a stub client and
// type-checked under tsc --strict.
const READMES = ['README.md', 'pkg-config/README.md'];
function loopSnippets() {
  const out = [];
  for (const readme of READMES) {
    const text = readFileSync(join(root, readme), 'utf8');
    for (const m of text.matchAll(/^```(js|ts)\n([\s\S]*?)^```$/gm)) {
      if (!/handleToolCall\(/.test(m[2]) || !/client\.(beta\.)?(messages|chat\.completions)\.create/.test(m[2])) continue;
      out.push({ name: `${readme}:${text.slice(0, m.index).split('\n').length}`, code: m[2] });
    }
  }
  return out;
}

const SNIPPETS = loopSnippets();

// What the recipe leaves to the reader: the SDK client (a stub with the SDK's shape), the task, the user's tools.
const GLOBALS_DTS = `
declare global {
  type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };
  var client: {
    beta: { messages: { create(body: Record<string, unknown>): Promise<{ content: Block[]; stop_reason: string }> } };
    messages: { create(body: Record<string, unknown>): Promise<{ content: Block[]; stop_reason: string }> };
  };
  var task: string;
  var messages: { role: 'user' | 'assistant'; content: unknown }[];
  var myTools: { name: string; description: string; input_schema: Record<string, unknown> }[];
  function runTool(name: string, input: Record<string, unknown>): Promise<string>;
}
export {};
`;
// Over the spill cap of a 200k budget (50k tokens), the line to find still at 2718.
const BIG = Array.from({ length: 12000 }, (_, i) => (i === 2717
  ? 'FAILED tests/test_price.py::test_discount - KeyError: price'
  : `tests/test_mod_${i % 37}.py::test_case_${i} PASSED`)).join('\n');
const PRELUDE = `
const LOG = ${JSON.stringify(BIG)};
globalThis.messages = [];
globalThis.task = 'Fix the failing discount test.';
globalThis.myTools = [{ name: 'bash', description: 'Runs a command.', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }];
globalThis.runTool = async () => LOG;
globalThis.bodies = [];
const create = async (body) => {
  bodies.push(structuredClone(body));
  const reply = (content, stop_reason) => ({ id: 'msg', type: 'message', role: 'assistant', content, stop_reason });
  if (bodies.length === 1) return reply([{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'pytest' } }], 'tool_use');
  if (bodies.length === 2) {
    const pointer = JSON.stringify(body.messages).match(/spill:\\/\\/[\\w.-]+\\/[\\w-]+/)[0];
    return reply([{ type: 'tool_use', id: 'toolu_2', name: 'grep_spill', input: { pointer, pattern: 'KeyError', context: 0 } }], 'tool_use');
  }
  return reply([{ type: 'text', text: 'done' }], 'end_turn');
};
globalThis.client = { messages: { create }, beta: { messages: { create } } };
`;

test('the README has a plain SDK loop recipe to test', () => {
  assert.ok(SNIPPETS.length >= 1, `no README code block runs a provider SDK loop with handleToolCall (${READMES.join(', ')})`);
});

for (const [i, s] of SNIPPETS.entries()) {
  test(`README plain SDK loop ${s.name} type-checks under tsc --strict and runs against a stub client`, () => {
    const dir = join(work, `snippet-${i}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(dir, 'globals.d.ts'), GLOBALS_DTS);
    writeFileSync(join(dir, 'snippet.ts'), s.code);
    try {
      execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext',
        '--moduleResolution', 'nodenext', '--lib', 'es2022,dom,esnext.disposable', 'globals.d.ts', 'snippet.ts'], { cwd: dir, encoding: 'utf8' });
    } catch (err) {
      assert.fail(`tsc --strict on ${s.name}:\n${err.stdout}${err.stderr}`);
    }
    const lines = s.code.split('\n');
    const imports = lines.filter((l) => l.startsWith('import '));
    const body = lines.filter((l) => !l.startsWith('import '));
    writeFileSync(join(dir, 'run.mjs'), [...imports, PRELUDE, ...body,
      'console.log(JSON.stringify({ calls: bodies.length, second: JSON.stringify(bodies[1]), cm: bodies.map((b) => b.context_management), last: messages.at(-2) }));'].join('\n'));
    const got = JSON.parse(execFileSync(process.execPath, ['run.mjs'], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop());
    assert.equal(got.calls, 3, 'bash, grep_spill, then the answer');
    assert.match(got.second, /spill:\/\//);
    assert.ok(got.second.length < BIG.length / 2, `the request was compressed (${got.second.length} chars, log ${BIG.length})`);
    assert.ok(got.cm.every((cm) => cm?.edits?.[0]?.type === 'clear_tool_uses_20250919'), 'context_management passed through');
    assert.match(JSON.stringify(got.last), /2718:FAILED tests\/test_price\.py::test_discount - KeyError: price/);
  });
}
