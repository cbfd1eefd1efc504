// Per-tool rules (`excludeTools`, `spill.toolCaps`) through the built
// package's `compress`: an excluded tool's outputs stay whole, a tool's own
// spill cap applies, and bad rules are INVALID_OPTION (or LIMIT_EXCEEDED)
// errors naming their path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, TraceLiteError, compress } from '../../pkg/entries/node.js';

/** `n` lines of output tagged `tag`. */
const lines = (tag, n) => Array.from({ length: n }, (_, i) => `${tag} line ${i}: output the agent read`).join('\n');

/** An OpenAI Chat request of [tool, output] steps. */
function request(steps) {
  const messages = [{ role: 'user', content: 'Fix the failing test.' }];
  steps.forEach(([tool, output], i) => {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${i}`, type: 'function', function: { name: tool, arguments: '{}' } }],
    });
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: output });
  });
  return { model: 'gpt-4o', messages };
}

const results = (req) => req.messages.filter((m) => m.role === 'tool').map((m) => m.content);

test('an excluded tool keeps its outputs whole; another tool is spilled', () => {
  const steps = [['todo', lines('todo', 900)], ['bash', lines('log', 900)], ['bash', 'ok']];
  const req = request(steps);
  const store = new SpillStore();
  const plain = compress(req, { store, session: 'tools-js' });
  assert.notEqual(results(plain.request)[0], steps[0][1], 'without the rule it is spilled');
  const { request: out, report } = compress(req, { store, session: 'tools-js', excludeTools: ['todo'] });
  const after = results(out);
  assert.equal(after[0], steps[0][1]);
  assert.notEqual(after[1], steps[1][1]);
  assert.match(after[1], /spill:\/\/tools-js\//);
  assert.deepEqual(report.changes.filter((c) => c.kind === 'excerpt').map((c) => c.message), [4]);
  store.free();
});

test("a tool's own spill cap applies to that tool only", () => {
  const steps = [['bash', lines('a', 60)], ['grep', lines('b', 60)], ['bash', 'ok']];
  const { request: out } = compress(request(steps), { spill: { toolCaps: { bash: 200 } } });
  const after = results(out);
  assert.ok(after[0].length < steps[0][1].length / 2 && after[0].includes('spill://'), after[0]);
  assert.equal(after[1], steps[1][1]);
});

test('bad rules name their path', () => {
  const req = request([['bash', 'ok']]);
  const cases = [
    [{ excludeTools: ['a', ''] }, 'INVALID_OPTION', 'excludeTools[1]'],
    [{ excludeTools: 'todo' }, 'INVALID_OPTION', 'excludeTools'],
    [{ excludeTools: [7] }, 'INVALID_OPTION', 'excludeTools[0]'],
    [{ excludeTools: Array(300).fill('t') }, 'LIMIT_EXCEEDED', 'excludeTools'],
    [{ spill: { toolCaps: { bash: 0 } } }, 'INVALID_OPTION', 'spill.toolCaps.bash'],
    [{ spill: { toolCaps: { bash: -3 } } }, 'INVALID_OPTION', 'spill.toolCaps.bash'],
    [{ spill: { toolCaps: { bash: 1e9 } } }, 'INVALID_OPTION', 'spill.toolCaps.bash'],
    [{ spill: { toolCaps: { '': 5 } } }, 'INVALID_OPTION', 'spill.toolCaps'],
    [{ spill: { toolCaps: ['bash'] } }, 'INVALID_OPTION', 'spill.toolCaps'],
  ];
  for (const [options, code, path] of cases) {
    assert.throws(() => compress(req, options), (err) => {
      assert.ok(err instanceof TraceLiteError, String(err));
      assert.equal(err.code, code, err.message);
      assert.equal(err.path, path, err.message);
      assert.ok(err.message.startsWith(path), err.message);
      return true;
    }, JSON.stringify(options));
  }
});

test('the AI SDK middleware passes the rules on', async () => {
  const { generateText, wrapLanguageModel } = await import('ai');
  const { MockLanguageModelV4 } = await import('ai/test');
  const { traceliteMiddleware } = await import('../../pkg/adapters/ai-sdk/index.js');
  const log = lines('log', 900);
  const messages = [
    { role: 'user', content: 'Fix the failing test.' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'memory', input: {} }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'memory', output: { type: 'text', value: log } }] },
  ];
  const seen = async (options) => {
    const mock = new MockLanguageModelV4({
      doGenerate: {
        content: [{ type: 'text', text: 'ok' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
        warnings: [],
      },
    });
    await generateText({ model: wrapLanguageModel({ model: mock, middleware: traceliteMiddleware(options) }), messages });
    return JSON.stringify(mock.doGenerateCalls[0].prompt);
  };
  const whole = JSON.stringify(log).slice(1, -1);
  assert.ok(!(await seen({})).includes(whole), 'spilled without the rule');
  assert.ok((await seen({ excludeTools: ['memory'] })).includes(whole));
});
