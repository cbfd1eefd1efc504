// Grounding recall (bench/grounding.mjs): fact extraction and classification
// on small synthetic trajectories, built as the bench replays them (OpenAI chat,
// call ids `call_<step>`), so these tests need no wasm package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ageBucket,
  candidates,
  classify,
  countFact,
  emptyGrounding,
  extractFacts,
  hiddenBy,
  mergeGrounding,
  occurs,
  ocrShows,
  oldStrVisible,
  stripMarkers,
  taskVerbatim,
} from '../../bench/grounding.mjs';
import { maskObservations } from '../../bench/policies.mjs';

/** The request before step `t`, as `trajectoryToRequest(…, t, 'openai-chat')` builds it. */
function requestAt(tr, t) {
  const messages = [];
  if (tr.system) messages.push({ role: 'system', content: tr.system });
  messages.push({ role: 'user', content: tr.task });
  tr.steps.slice(0, t).forEach((s, i) => {
    if (s.tool === 'message') {
      messages.push({ role: 'assistant', content: s.thought ?? '' }, { role: 'user', content: s.observation });
      return;
    }
    messages.push({
      role: 'assistant',
      content: s.thought || null,
      tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: s.tool, arguments: JSON.stringify(s.args) } }],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: s.observation });
  });
  return messages;
}

const bash = (command, observation, thought = null) => ({ tool: 'bash', args: { command }, observation, thought });

/** A run: grep finds a function, the agent opens its file at the reported line, then edits it. */
function trajectory() {
  return {
    system: 'You are an agent. Use bash.',
    task: 'Fix the rounding bug in the pricing module. Do not touch tests.',
    steps: [
      bash('grep -rn "def apply_discount" src', 'src/shop/pricing/discounts.py:541:def apply_discount(order, rate):'),
      bash('sed -n 530,560p src/shop/pricing/discounts.py', '    total = round_half_even(subtotal)\n    return total'),
      bash('ls', 'README.md\nsetup.py\nsrc'),
      bash('ls src', 'shop'),
      bash('ls src/shop', 'pricing'),
      bash('ls src/shop/pricing', 'discounts.py'),
      bash('ls src/shop/pricing/..', 'pricing'),
      bash("sed -n '541,545p' shop/pricing/discounts.py && grep -n round_half_even src/shop/pricing/discounts.py", 'ok'),
    ],
  };
}

test('facts are leaves learned from earlier tool output, with the latest source observation', () => {
  const steps = extractFacts(trajectory());
  const at = (t) => steps.find((s) => s.step === t).facts.map((f) => `${f.kind}:${f.text}@${f.source}`).sort();
  // Step 1: `src/shop/pricing/discounts.py` is the whole token seen in step 0's output.
  assert.deepEqual(at(1), ['path:src/shop/pricing/discounts.py@0']);
  // Step 7: the path was already typed at step 1 (excluded); the longest suffix of
  // `shop/pricing/discounts.py` seen in an observation is itself (step 0 shows it
  // inside src/shop/…) but the longer src/shop/pricing/discounts.py was typed at
  // step 1; 541 comes from step 0 (545 from nowhere); round_half_even from step 1.
  assert.deepEqual(at(7), ['identifier:round_half_even@1', 'integer:541@0']);
  // `ls` and `src` are stoplisted or typed before; no facts at step 2.
  assert.deepEqual(at(2), []);
});

test('longest /-suffix rule: the fact is the longest suffix some earlier observation shows', () => {
  const tr = {
    task: 'go',
    steps: [
      bash('find . -name "*.py"', './lib/pkg/core/engine.py\n'),
      bash('cat /repo/lib/pkg/core/engine.py', 'x'),
      bash('cat /other/core/engine.py', 'y'),
    ],
  };
  const s = extractFacts(tr);
  assert.deepEqual(s[1].facts.map((f) => f.text), ['lib/pkg/core/engine.py']);
  // At step 2, `core/engine.py` is in step 0's output but was also typed at step 1: excluded, no fall-back to `engine.py`.
  assert.deepEqual(s[2].facts, []);
  // A suffix must start at a `/` of the observation's path, not inside a name.
  assert.equal(occurs('./lib/mycore/engine.py', 'core/engine.py', 'path'), false);
  assert.equal(occurs('./lib/my-engine.py', 'engine.py', 'path'), false);
  assert.equal(occurs('see lib/pkg/core/engine.py.', 'core/engine.py', 'path'), true);
  assert.equal(occurs('engine.pyc', 'engine.py', 'path'), false);
});

test('facts in the system prompt, the task or earlier arguments and thoughts are excluded', () => {
  const tr = {
    system: 'Tools: bash. Remember PricingEngine.',
    task: 'The helper compute_totals is wrong.',
    steps: [
      bash('grep -rn compute', 'a.py:12: def compute_totals(items):\nb.py:88: class PricingEngine:\nc.py:99: TAX_TABLE = {}\nd.py:7: LEDGER_KEY = 1'),
      bash('echo hi', 'hi', 'I will look at LEDGER_KEY later.'),
      bash('python -c "import a; a.compute_totals(); a.PricingEngine(); a.TAX_TABLE; a.LEDGER_KEY"', 'done'),
    ],
  };
  const s = extractFacts(tr);
  assert.deepEqual(s[2].facts.map((f) => f.text), ['TAX_TABLE']);
  // The step's own thought does not exclude its facts.
  const own = extractFacts({ task: 't', steps: [bash('ls', 'widget_factory.py'), bash('cat widget_factory.py', 'x', 'Open widget_factory.py')] });
  assert.deepEqual(own[1].facts.map((f) => f.text), ['widget_factory.py']);
});

test('stoplisted words, short names and single digits are never facts', () => {
  const tr = {
    task: 'go',
    steps: [
      bash('ls', 'print return self value import python3 grep 7 abc def\nfrobnicate_widget 4096'),
      bash('python3 -c "print(self.value); import grep; x = 7; abc; frobnicate_widget(4096)"', ''),
    ],
  };
  assert.deepEqual(extractFacts(tr)[1].facts.map((f) => f.text).sort(), ['4096', 'frobnicate_widget']);
  const c = candidates("sed -n '720,730p' django/db/models/query.py && echo v3.10");
  assert.deepEqual(c.integers, ['720', '730']);
  assert.deepEqual(c.paths.map((p) => p.token), ['django/db/models/query.py']);
  assert.deepEqual(c.identifiers, []);
});

test('format_error and message steps carry no facts; a message turn is user-authored', () => {
  const tr = {
    task: 'go',
    steps: [
      bash('ls', 'alpha_module.py'),
      { tool: 'format_error', args: { bash_blocks: 2 }, observation: 'Please give exactly one command. beta_helper' },
      { tool: 'message', args: 'x', thought: 'hmm', observation: 'Keep going with gamma_thing please.' },
      bash('cat alpha_module.py; grep beta_helper .; grep gamma_thing .', ''),
    ],
  };
  const s = extractFacts(tr);
  assert.deepEqual(s.map((x) => x.step), [0, 3]);
  assert.deepEqual(s[1].facts.map((f) => `${f.text}@${f.source}`), ['alpha_module.py@0', 'beta_helper@1']);
});

test('classes: TEXT in full history, GONE when only a masked observation held it', () => {
  const tr = trajectory();
  const fact = extractFacts(tr).find((s) => s.step === 7).facts.find((f) => f.text === 'round_half_even');
  const full = requestAt(tr, 7);
  assert.equal(classify(full, fact), 'TEXT');
  // Masking keeps the last 5 observations: step 1's output (round_half_even) is masked.
  const masked = maskObservations(5)(full);
  assert.equal(classify(masked, fact, { blobs: [] }), 'GONE');
  // Keeping 6 shows it again.
  assert.equal(classify(maskObservations(6)(full), fact), 'TEXT');
});

test('markers and spill:// URIs do not count as text', () => {
  const fact = { kind: 'integer', text: '41', source: 0, sources: [0] };
  const msgs = (content) => [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_0', content },
  ];
  assert.equal(classify(msgs('Old environment output: (41 lines omitted)'), fact), 'GONE');
  assert.equal(classify(msgs('[41 duplicate lines removed; they appear in step 7; original: spill://s/k41]'), fact), 'GONE');
  assert.equal(classify(msgs('[output cleared at the edit in step 41: 3 lines (9 tokens) of earlier output removed; full text: spill://s/a]'), fact), 'GONE');
  assert.equal(classify(msgs('head\nspill://bench-41/41\nline 41: ok'), fact), 'TEXT');
  assert.equal(stripMarkers('a [… 12 lines hidden (3-14, 1.0 KB) …] b'), 'a \n b');
});

test('POINTER when a pointer of the request reaches a blob holding the fact; GONE otherwise', () => {
  const fact = { kind: 'identifier', text: 'round_half_even', source: 0, sources: [0] };
  const msgs = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_0', content: '[output cleared at the edit in step 3: 2 lines (9 tokens) of earlier output removed; full text: spill://s/k1]' },
  ];
  const store = { k1: 'index: spill://s/k2', k2: 'total = round_half_even(subtotal)' };
  const reach = (pointers) => {
    const out = [];
    const queue = pointers.map((p) => p.key);
    const seen = new Set();
    while (queue.length) {
      const k = queue.shift();
      if (seen.has(k) || !(k in store)) continue;
      seen.add(k);
      out.push(store[k]);
      queue.push(...[...store[k].matchAll(/spill:\/\/s\/(\w+)/g)].map((m) => m[1]));
    }
    return out;
  };
  assert.equal(classify(msgs, fact, { blobs: reach }), 'POINTER');
  assert.equal(classify(msgs, fact, { blobs: ['total = round_half(subtotal)'] }), 'GONE');
  assert.equal(classify(msgs, { ...fact, text: 'subtotal' }, { blobs: reach }), 'POINTER');
});

test('IMAGE only when tesseract read the fact in an image shown for its source observation', () => {
  const fact = { kind: 'integer', text: '540', source: 0, sources: [0] };
  const msgs = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_0', content: '[3 lines of output shown as 1 image; full text: spill://s/k (read_spill)]' },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
  ];
  const asked = [];
  const ocr = (text) => (urls) => (asked.push(...urls), [text]);
  assert.equal(classify(msgs, fact, { ocrTexts: ocr('  540 def apply(order):') }), 'IMAGE');
  assert.deepEqual(asked, ['data:image/png;base64,AAAA']);
  assert.equal(classify(msgs, fact, { ocrTexts: ocr('  546 def apply(order):'), blobs: [] }), 'GONE');
  assert.equal(classify(msgs, fact, { ocrTexts: ocr('  5400 def'), blobs: [] }), 'GONE');
  // Without OCR (the browser), honestly "in an image, not read".
  assert.equal(classify(msgs, fact), 'IMAGE_UNREAD');
  // An image of another observation does not count.
  assert.equal(classify(msgs, { ...fact, source: 1, sources: [1] }, { ocrTexts: ocr('540'), blobs: [] }), 'GONE');
  // OCR folding: `_` read as a space, case, 0/o; but never another digit.
  assert.equal(ocrShows('def is sliced(self)', 'is_sliced'), true);
  assert.equal(ocrShows('Total = R0UND_HALF_EVEN(x)', 'round_half_even'), true);
  assert.equal(ocrShows('line 1O24', '1024'), true);
  assert.equal(ocrShows('line 1025', '1024'), false);
  assert.equal(ocrShows('is_slicedx', 'is_sliced'), false);
  // Wrapped at the image's right edge: still read; but lines never merge into another number.
  assert.equal(ocrShows('Here is /wor\nkspace/pkg/core.py:» 162', 'workspace/pkg/core.py'), true);
  assert.equal(ocrShows('total 54\n0 items', '540'), true);
  assert.equal(ocrShows('total 54\n06 items', '540'), false);
});

test('old_str: a multi-line old_str copied from cat -n output, visible when the observation is', () => {
  const view = "Here's the result of running `cat -n` on /r/m.py:\n    10\tdef f(x):\n    11\t    return x + 1\n    12\t";
  const tr = {
    task: 'fix',
    steps: [
      { tool: 'str_replace_editor', args: { command: 'view', path: '/r/m.py' }, observation: view },
      { tool: 'execute_bash', args: { command: 'true' }, observation: '' },
      { tool: 'str_replace_editor', args: { command: 'str_replace', path: '/r/m.py', old_str: 'def f(x):\n    return x + 1', new_str: 'def f(x):\n    return x + 2' }, observation: 'edited' },
      { tool: 'str_replace_editor', args: { command: 'str_replace', path: '/r/m.py', old_str: 'def g():\n    pass', new_str: '' }, observation: 'no match' },
      { tool: 'str_replace_editor', args: { command: 'str_replace', path: '/r/m.py', old_str: 'return x + 1', new_str: 'return 0' }, observation: 'ok' },
    ],
  };
  const s = extractFacts(tr);
  assert.deepEqual(s.find((x) => x.step === 2).oldStr, { text: 'def f(x):\n    return x + 1', source: 0 });
  // Not shown by any observation, or single-line: not checked.
  assert.equal(s.find((x) => x.step === 3).oldStr, null);
  assert.equal(s.find((x) => x.step === 4).oldStr, null);
  const req = requestAt(tr, 2);
  assert.equal(oldStrVisible(req, 'def f(x):\n    return x + 1'), true);
  assert.equal(oldStrVisible(maskObservations(1)(req), 'def f(x):\n    return x + 1'), false);
});

test('the task is verbatim when every user-authored message is word for word in the output', () => {
  const original = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'Fix the bug in pricing.\nDo not touch tests.' },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'Also update the changelog.' },
  ];
  assert.equal(taskVerbatim(original, original), true);
  const summarized = [original[0], { role: 'user', content: 'Fix the bug in pricing.' }, original[3]];
  assert.equal(taskVerbatim(original, summarized), false);
  const archived = [original[0], { role: 'user', content: '[TraceLite constraint archive]\nFix the bug in pricing.\nDo not touch tests.\n\nAlso update the changelog.' }];
  assert.equal(taskVerbatim(original, archived), true);
});

test('hidden facts are attributed to the stage that changed their source observation', () => {
  const call = (i) => [
    { role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: `call_${i}`, content: `output ${i}: x_y_z` },
  ];
  const original = [{ role: 'system', content: 's' }, { role: 'user', content: 't' }, ...call(0), ...call(1), ...call(2)];
  // Output: steps 0 and 1 compacted into a summary, step 2 kept, an image after step 2.
  const output = [
    original[0],
    original[1],
    { role: 'user', content: '[TraceLite summary of 4 earlier messages]' },
    original[6],
    { ...original[7], content: '[1 line of output shown as 1 image; full text: spill://s/k (read_spill)]' },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
  ];
  const f = (source) => ({ kind: 'identifier', text: 'x_y_z', source, sources: [source] });
  // `message` indexes the output's own messages: call_2's tool message is 4 there.
  assert.equal(hiddenBy(output, f(2), [{ stage: 'optical', message: 4, kind: 'snapshot' }]), 'optical');
  assert.equal(hiddenBy(output, f(2), [{ stage: 'spill', message: 4 }, { stage: 'phase', message: 4 }, { stage: 'optical', message: 4 }]), 'phase');
  assert.equal(hiddenBy(output, f(2), [{ stage: 'dedup', message: 4 }, { stage: 'spill', message: 6 }]), 'dedup');
  assert.equal(hiddenBy(output, f(2), [{ stage: 'phase', message: 6 }]), 'optical');
  assert.equal(hiddenBy(output, f(0), [{ stage: 'phase', message: 2 }, { stage: 'compact', message: 2 }]), 'compact');
  assert.equal(hiddenBy(original, f(1), []), 'unattributed');
});

test('totals by class and age bucket', () => {
  assert.deepEqual([1, 3, 4, 5, 6, 10, 11, 20, 21, 99].map(ageBucket), ['1-3', '1-3', '4-5', '4-5', '6-10', '6-10', '11-20', '11-20', '>20', '>20']);
  const a = emptyGrounding();
  countFact(a, 'TEXT', 2);
  countFact(a, 'GONE', 12, 'phase');
  const b = emptyGrounding();
  countFact(b, 'POINTER', 30, 'compact');
  b.oldStr.checked = 2;
  b.oldStr.visible = 1;
  b.oldStr.hiddenBy.spill = 1;
  const m = mergeGrounding([a, b]);
  assert.equal(m.facts, 3);
  assert.deepEqual([m.text, m.image, m.pointer, m.gone], [1, 0, 1, 1]);
  assert.deepEqual(m.byAge['11-20'], { facts: 1, text: 0, image: 0, pointer: 0, gone: 1, unread: 0 });
  assert.deepEqual(m.hiddenBy, { phase: 1, compact: 1 });
  assert.deepEqual(m.oldStr, { checked: 2, visible: 1, hiddenBy: { spill: 1 } });
  countFact(a, 'IMAGE_UNREAD', 1);
  assert.equal(mergeGrounding([a]).unread, 1);
  assert.throws(() => countFact(a, 'IMAGE?', 1));
});

test("the playground's step summary names what hid an old_str", async () => {
  const { groundingSummary } = await import('../../www/grounding-view.js');
  const g = { executed: true, tool: 'str_replace_editor', facts: [], taskVerbatim: true, oldStr: { source: 3, visible: false, hiddenBy: 'optical' } };
  assert.match(groundingSummary(g, 9), /old_str \(seen at step 3\) is not visible as text \(hidden by optical\)\./);
  g.oldStr = { source: 3, visible: true, hiddenBy: null };
  assert.match(groundingSummary(g, 9), /old_str \(seen at step 3\) is visible as text\./);
});
