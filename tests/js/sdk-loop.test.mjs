// Plain provider SDK loops (no framework): the examples in
// pkg-config/examples/sdk-loop/ run against stub clients shaped like the OpenAI
// and Anthropic SDKs (`chat.completions.create`, `messages.create`), the READMEs'
// loop recipes run as written (and type-check under tsc --strict against the
// `openai` and `@anthropic-ai/sdk` types), and the Anthropic format keeps
// top-level fields it does not know (`context_management`, Anthropic's
// server-side context editing) through compress.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pkgDir, root } from './support/hosts.mjs';
import { suiteSnippets } from './support/readme-snippets.mjs';
import { SpillStore, compress, handleToolCall, spillToolDefinitions } from '../../pkg/entries/node.js';

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
  // The SDKs whose types the README loops are checked against.
  mkdirSync(join(work, 'node_modules', '@anthropic-ai'));
  mkdirSync(join(work, 'node_modules', '@types'));
  for (const sdk of ['openai', '@anthropic-ai/sdk', '@types/node']) symlinkSync(join(root, 'node_modules', sdk), join(work, 'node_modules', sdk), 'dir');
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
// The README recipes for plain SDK loops: code blocks using `client.messages.create`
// (or `client.beta.messages.create`) or `client.chat.completions.create` with
// handleToolCall, type-checked under tsc --strict against the real `@anthropic-ai/sdk`
// and `openai` types (a ```js block as JavaScript, checkJs) and run as written, the
// SDK module they import replaced by a stand-in whose client answers from a script
// (the paid model): bash, then grep_spill on the pointer it was shown, then an answer.
const SNIPPETS = suiteSnippets('sdk-loop');

/** Which SDK a loop snippet calls. */
const sdkOf = (code) => (/client\.chat\.completions\.create/.test(code) ? 'openai' : 'anthropic');

// Over the spill cap of a 200k budget (50k tokens), the line to find still at 2718:
// the output of the command the stand-in model runs with the snippet's own bash tool.
const BIG = Array.from({ length: 12000 }, (_, i) => (i === 2717
  ? 'FAILED tests/test_price.py::test_discount - KeyError: price'
  : `tests/test_mod_${i % 37}.py::test_case_${i} PASSED`)).join('\n');
const COMMAND = 'cat pytest.log';
/** The script of the stand-in models: what every request is kept in, where the pointer is. */
const SCRIPT = `
export const bodies = [];
const pointerIn = (messages) => JSON.stringify(messages).match(/spill:\\/\\/[\\w.-]+\\/[\\w-]+/)[0];
const grep = (pointer) => ({ pointer, pattern: 'KeyError', context: 0 });
`;
// Stand-ins for the SDK modules (run time only: tsc checks against the real ones).
const STAND_INS = {
  anthropic: {
    module: '@anthropic-ai/sdk',
    js: `${SCRIPT}
const create = async (body) => {
  bodies.push(structuredClone(body));
  const reply = (content, stop_reason) => ({ id: 'msg', type: 'message', role: 'assistant', content, stop_reason });
  if (bodies.length === 1) return reply([{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: ${JSON.stringify(COMMAND)} } }], 'tool_use');
  if (bodies.length === 2) return reply([{ type: 'tool_use', id: 'toolu_2', name: 'grep_spill', input: grep(pointerIn(body.messages)) }], 'tool_use');
  return reply([{ type: 'text', text: 'done' }], 'end_turn');
};
export default class Anthropic {
  messages = { create };
  beta = { messages: { create } };
}
`,
  },
  openai: {
    module: 'openai',
    js: `${SCRIPT}
const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
const create = async (body) => {
  bodies.push(structuredClone(body));
  const reply = (message, finish_reason) => ({ id: 'chatcmpl', object: 'chat.completion', choices: [{ index: 0, finish_reason, message: { role: 'assistant', content: null, refusal: null, ...message } }] });
  if (bodies.length === 1) return reply({ tool_calls: [call('call_1', 'bash', { command: ${JSON.stringify(COMMAND)} })] }, 'tool_calls');
  if (bodies.length === 2) return reply({ tool_calls: [call('call_2', 'grep_spill', grep(pointerIn(body.messages)))] }, 'tool_calls');
  return reply({ content: 'done' }, 'stop');
};
export default class OpenAI {
  chat = { completions: { create } };
}
`,
  },
};

test('the READMEs have a plain SDK loop recipe for each SDK', () => {
  assert.deepEqual([...new Set(SNIPPETS.map((s) => sdkOf(s.code)))].sort(), ['anthropic', 'openai'],
    'a README code block runs an Anthropic and an OpenAI SDK loop with handleToolCall');
});

for (const [i, s] of SNIPPETS.entries()) {
  const sdk = sdkOf(s.code);
  test(`README plain ${sdk} SDK loop ${s.name} type-checks under tsc --strict against the SDK's types and runs as written against a stub client`, () => {
    // Type-checked beside the real SDKs (work/node_modules).
    const dir = join(work, `snippet-${i}`);
    const file = `snippet.${s.lang}`;
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(dir, file), s.code);
    try {
      execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--strict', '--allowJs', '--checkJs', '--noEmit', '--target', 'es2022',
        '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom,esnext.disposable', file], { cwd: dir, encoding: 'utf8' });
    } catch (err) {
      assert.fail(`tsc --strict on ${s.name}:\n${err.stdout}${err.stderr}`);
    }
    // Run beside the stand-in SDK, in a directory holding the log its bash command prints.
    const run = join(work, `run-${i}`);
    const standIn = join(run, 'node_modules', STAND_INS[sdk].module);
    mkdirSync(standIn, { recursive: true });
    symlinkSync(join(work, 'node_modules', 'tracelite'), join(run, 'node_modules', 'tracelite'), 'dir');
    writeFileSync(join(standIn, 'package.json'), JSON.stringify({ name: STAND_INS[sdk].module, type: 'module', exports: './index.js' }));
    writeFileSync(join(standIn, 'index.js'), STAND_INS[sdk].js);
    writeFileSync(join(run, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(run, 'pytest.log'), BIG);
    writeFileSync(join(run, 'snippet.mjs'), s.code);
    writeFileSync(join(run, 'run.mjs'), `import { bodies } from '${STAND_INS[sdk].module}';
await import('./snippet.mjs');
console.log(JSON.stringify({ calls: bodies.length, second: JSON.stringify(bodies[1]), cm: bodies.map((b) => b.context_management), reply: bodies[2]?.messages.at(-1) }));
`);
    const got = JSON.parse(execFileSync(process.execPath, ['run.mjs'], { cwd: run, encoding: 'utf8' }).trim().split('\n').pop());
    assert.equal(got.calls, 3, 'bash, grep_spill, then the answer');
    assert.match(got.second, /spill:\/\//);
    assert.match(got.second, /tests\/test_mod_0\.py::test_case_0 PASSED/, 'the bash tool\'s output reached the model (its excerpt)');
    assert.ok(got.second.length < BIG.length / 2, `the request was compressed (${got.second.length} chars, log ${BIG.length})`);
    if (sdk === 'anthropic') assert.ok(got.cm.every((cm) => cm?.edits?.[0]?.type === 'clear_tool_uses_20250919'), 'context_management passed through');
    // grep_spill answered from the store: its reply is the last message of the next request.
    assert.match(JSON.stringify(got.reply), /2718:FAILED tests\/test_price\.py::test_discount - KeyError: price/);
  });
}

// The spill tools' definitions are typed per format, so that they go into each SDK's
// `tools` as they are, and the handler takes the arguments as each SDK hands them.
const DEFINITIONS_TS = `
import type OpenAI from 'openai';
import type Anthropic from '@anthropic-ai/sdk';
import { handleToolCall, isSpillTool, spillToolDefinitions, SpillStore, type GeminiFunctionDeclaration, type SpillToolName, type ToolFormat } from 'tracelite';
const chat: OpenAI.ChatCompletionTool[] = spillToolDefinitions();
const chatToo: OpenAI.ChatCompletionFunctionTool[] = spillToolDefinitions('openai');
const responses: OpenAI.Responses.Tool[] = spillToolDefinitions('openai-responses');
const functions: OpenAI.Responses.FunctionTool[] = spillToolDefinitions('openai-responses');
const anthropic: Anthropic.Tool[] = spillToolDefinitions('anthropic');
const beta: Anthropic.Beta.BetaToolUnion[] = spillToolDefinitions('anthropic');
const gemini: { functionDeclarations: GeminiFunctionDeclaration[] }[] = [{ functionDeclarations: spillToolDefinitions('gemini') }];
declare const format: ToolFormat;
const any: object[] = spillToolDefinitions(format);
// @ts-expect-error: Anthropic definitions are not Chat Completions tools
const wrong: OpenAI.ChatCompletionTool[] = spillToolDefinitions('anthropic');
// @ts-expect-error: Chat Completions definitions are not Responses tools
const wrongToo: OpenAI.Responses.Tool[] = spillToolDefinitions('openai-chat');
// @ts-expect-error: not a format
spillToolDefinitions('cohere');
declare const use: Anthropic.ToolUseBlock;
declare const call: OpenAI.ChatCompletionMessageFunctionToolCall;
declare const fromGemini: { name?: string; args?: Record<string, unknown> };
const store = new SpillStore();
const replies: string[] = [
  handleToolCall(use.name, use.input, { store, session: 's' }).text,
  handleToolCall(call.function.name, call.function.arguments, 's').text,
  store.handleToolCall(fromGemini.name ?? '', fromGemini.args, 's').text,
];
declare const name: string;
const spill: SpillToolName | undefined = isSpillTool(name) ? name : undefined;
void [chat, chatToo, responses, functions, anthropic, beta, gemini, any, wrong, wrongToo, replies, spill];
`;

test('spillToolDefinitions is typed per format (OpenAI Chat, Responses, Anthropic, Gemini) against the SDKs\' tool types, and the output has those shapes', () => {
  const dir = join(work, 'definitions');
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(dir, 'definitions.ts'), DEFINITIONS_TS);
  try {
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext',
      '--moduleResolution', 'nodenext', '--lib', 'es2022,dom,esnext.disposable', 'definitions.ts'], { cwd: dir, encoding: 'utf8' });
  } catch (err) {
    assert.fail(`tsc --strict:\n${err.stdout}${err.stderr}`);
  }
  // The values have the declared keys, and only those.
  const keys = (format) => spillToolDefinitions(format).map((d) => Object.keys(d).sort().join(','));
  const names = (defs) => defs.map((d) => d.name ?? d.function.name);
  assert.deepEqual(keys('openai-chat'), ['function,type', 'function,type']);
  assert.deepEqual(keys('openai-responses'), ['description,name,parameters,strict,type', 'description,name,parameters,strict,type']);
  assert.deepEqual(spillToolDefinitions('openai-responses').map((d) => d.strict), [false, false]);
  assert.deepEqual(keys('anthropic'), ['description,input_schema,name', 'description,input_schema,name']);
  assert.deepEqual(keys('gemini'), ['description,name,parametersJsonSchema', 'description,name,parametersJsonSchema']);
  for (const format of ['openai-chat', 'openai-responses', 'anthropic', 'gemini']) assert.deepEqual(names(spillToolDefinitions(format)), ['read_spill', 'grep_spill']);
  const schema = spillToolDefinitions('gemini')[1].parametersJsonSchema;
  assert.deepEqual(schema, spillToolDefinitions('anthropic')[1].input_schema);
  assert.equal(schema.additionalProperties, false);
  // Arguments as each SDK hands them; what the tool cannot use is an error reply.
  const store = new SpillStore();
  store.put('s', 'tool-1', 'a\nb\nc');
  assert.equal(handleToolCall('read_spill', { pointer: 'spill://s/tool-1' }, { store, session: 's' }).isError, false);
  assert.equal(handleToolCall('read_spill', '{"pointer":"spill://s/tool-1"}', { store, session: 's' }).isError, false);
  for (const bad of [5, [1], null, 'not json']) assert.equal(handleToolCall('read_spill', bad, { store, session: 's' }).isError, true, JSON.stringify(bad));
});
