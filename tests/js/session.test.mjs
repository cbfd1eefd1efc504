// The stateful API: new TraceLite(options), processStep, addMessage, assemble, telemetry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SpillStore, TraceLite, TraceLiteError, compress, trajectoryToRequest } from '../../pkg/entries/node.js';

const root = new URL('../../', import.meta.url).pathname;
const sample = join(root, 'tests/fixtures/sample-trajectory.json');
const traces = process.env.TRACELITE_TRACES ?? join(root, '../shared/traces');
const sharedTrace = join(traces, 'mini-swe-agent_gemini-3-pro__astropy__astropy-13236.json');

function throwsCode(fn, code, path) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TraceLiteError, `expected TraceLiteError, got ${err}`);
    assert.equal(err.code, code, err.message);
    if (path !== undefined) assert.equal(err.path, path, err.message);
    return true;
  });
}

/** Feeds step i of a trajectory the way `trajectoryToRequest` lays it out. */
function feed(tl, trajectory, i) {
  const step = trajectory.steps[i];
  const thought = step.thought ?? '';
  if (step.tool === 'message') {
    tl.addMessage({ role: 'assistant', content: thought });
    tl.addMessage({ role: 'user', content: step.observation ?? '' });
    return undefined;
  }
  if (thought) tl.addMessage({ role: 'assistant', content: thought });
  return tl.processStep({ id: `call_${i}`, name: step.tool, arguments: step.args ?? {} }, step.observation ?? '');
}

for (const file of [sample, sharedTrace]) {
  const skip = !existsSync(file) && `needs ${file.split('/').pop()} from ../shared/traces or TRACELITE_TRACES`;
  test(`assemble equals stateless compress turn after turn (${file.split('/').pop()})`, { skip }, () => {
    const trajectory = JSON.parse(readFileSync(file, 'utf8'));
    const settings = { session: 'js-session', budget: 16000 };
    const tl = new TraceLite(settings);
    const store = new SpillStore();
    try {
      if (trajectory.system) tl.addMessage({ role: 'system', content: trajectory.system });
      tl.addMessage({ role: 'user', content: trajectory.task });
      const turns = Math.min(trajectory.steps.length, 25);
      for (let t = 0; t < turns; t++) {
        if (t > 0) feed(tl, trajectory, t - 1);
        const got = tl.assemble('openai-chat', { model: 'replay', messages: null });
        const want = compress(trajectoryToRequest(trajectory, t), { ...settings, store }).request;
        assert.deepEqual(got, want, `turn ${t}`);
      }
      const tel = tl.telemetry();
      assert.equal(tel.assembles, turns);
      assert.ok(tel.totalTokensSent <= tel.totalTokensRaw);
      assert.equal(tl.report().tokensAfter, tel.tokensSent);
      // Every pointer of the last report reads back from the session.
      for (const change of tl.report().changes.filter((c) => c.pointer)) {
        assert.ok(tl.readSpill(change.pointer).length > 0);
      }
    } finally {
      tl.free();
      store.free();
    }
  });
}

/** Runs `fn` with a fresh session and frees it (Node 20 has no `using`). */
function withSession(options, fn) {
  const tl = new TraceLite(options);
  try {
    fn(tl);
  } finally {
    tl.free();
  }
}

test('tool calls in OpenAI, AI SDK and plain shapes; edits are reported', () => withSession({ window: 0, optical: { batch: 1 }, plan: { enabled: false } }, (tl) => {
  tl.addMessage({ role: 'user', content: 'fix the bug' });
  const a = tl.processStep({ id: 'a', type: 'function', function: { name: 'bash', arguments: '{"command":"cat app.py"}' } }, 'x = 1\n'.repeat(50));
  assert.deepEqual(a, { step: 1, callId: 'a', outputTokens: a.outputTokens, changesExisting: false });
  const b = tl.processStep({ toolCallId: 'b', toolName: 'str_replace_editor', input: { command: 'str_replace', path: '/app.py', old_str: 'x', new_str: 'y' } }, 'The file /app.py has been edited.');
  assert.deepEqual(b.edit, { kind: 'tool', mode: 'in-place', target: '/app.py' });
  assert.equal(b.changesExisting, true);
  const c = tl.processStep({ name: 'bash', arguments: { command: 'pytest' } }, { passed: 3 });
  assert.equal(c.callId, 'call_3');
  const req = tl.assemble();
  assert.deepEqual(req.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool']);
  assert.equal(req.messages[6].content, '{"passed":3}');
  assert.equal(req.messages[3].tool_calls[0].function.arguments, JSON.stringify({ command: 'str_replace', path: '/app.py', old_str: 'x', new_str: 'y' }));
  // The change cleared the view of the file it edited (window 0); the pointer reads it back.
  const stone = req.messages[2].content;
  assert.match(stone, /^\[output cleared at step 2: 50 lines/);
  assert.equal(tl.readSpill(stone.match(/spill:\/\/[^\]]+/)[0]), 'x = 1\n'.repeat(50));
  const tel = tl.telemetry();
  assert.equal(tel.steps, 3);
  assert.equal(tel.edits, 1);
  assert.equal(tel.firstEditStep, 2);
  assert.equal(tel.phaseStartStep, 2);
  assert.ok(tel.savedByStage.phase > 0);
  assert.equal(tel.spillBlobs, tl.listSpills().length);
  assert.deepEqual(tl.lastSpills.map((s) => s.text), ['x = 1\n'.repeat(50)]);
}));

test('a host token counter and base request members', () => withSession({ countTokens: (text) => text.length }, (tl) => {
  tl.addMessage({ role: 'user', content: 'hello' });
  const step = tl.processStep({ name: 'bash', arguments: {} }, '12345');
  assert.equal(step.outputTokens, 5);
  const req = tl.assemble('openai-chat', { model: 'gpt-4o', temperature: 0 });
  assert.deepEqual(Object.keys(req), ['model', 'temperature', 'messages']);
}));

test('bad input throws TraceLiteError with codes and paths', () => {
  throwsCode(() => new TraceLite({ windw: 3 }), 'INVALID_OPTION', 'windw');
  throwsCode(() => new TraceLite({ countTokens: 3 }), 'INVALID_OPTION', 'countTokens');
  throwsCode(() => new TraceLite('fast'), 'INVALID_OPTION', 'options');
  const tl = new TraceLite();
  throwsCode(() => tl.processStep(null, ''), 'INVALID_TOOL_CALL', 'toolCall');
  throwsCode(() => tl.processStep({ arguments: {} }, ''), 'INVALID_TOOL_CALL', 'toolCall.name');
  tl.processStep({ id: 'x', name: 'bash' }, '');
  throwsCode(() => tl.processStep({ id: 'x', name: 'bash' }, ''), 'INVALID_TOOL_CALL', 'toolCall.id');
  throwsCode(() => tl.addMessage({ role: 'tool', tool_call_id: 'x', content: 'y' }), 'INVALID_REQUEST', 'message');
  throwsCode(() => tl.addMessage({ role: 'wizard', content: 'y' }), 'INVALID_REQUEST', 'message.role');
  throwsCode(() => tl.assemble('cohere'), 'UNKNOWN_FORMAT', 'format');
  throwsCode(() => tl.readSpill('spill://default/nope'), 'SPILL_NOT_FOUND');
  tl.free();
  assert.throws(() => tl.telemetry(), /freed/);
  tl[Symbol.dispose]();
});

test('TraceLite#finishStage compacts at the next assemble and pinned constraints survive it word for word', async () => {
  const agent = new TraceLite({ session: 'stage-test', compact: { keep: 2, minTurns: 0, planner: false, minSaving: 0 } });
  agent.addMessage({ role: 'user', content: 'Fix the parser. Never touch the tests.' });
  assert.equal(agent.pinConstraint('Answer in English only.'), true);
  assert.equal(agent.pinConstraint('Answer in English only.'), false);
  for (let i = 0; i < 8; i++) agent.processStep({ id: `c${i}`, name: 'bash', arguments: { command: `cat f${i}.py` } }, `line ${i}\n`.repeat(20));
  const before = agent.assemble();
  assert.ok(!JSON.stringify(before).includes('Answer in English only.'));
  agent.finishStage();
  const after = agent.assemble();
  const text = JSON.stringify(after);
  assert.ok(text.includes('Answer in English only.'), 'pinned constraint archived');
  assert.ok(text.includes('Never touch the tests.'), 'user constraint archived');
  assert.ok(after.messages.length < before.messages.length, 'history compacted');
  assert.deepEqual(agent.pinnedConstraints(), ['Answer in English only.']);
  agent.free();
});
