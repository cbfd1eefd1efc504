// A request still over `budget` after every stage (issue 50, item 2): a 30 MB user
// message (no stage may cut a user message) against the default 128k budget.
// `report.overBudget` by default, `OVER_BUDGET` with `limits.overBudget: 'error'`,
// nothing for a request within the budget; the proxy's header and its 413.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, TraceLiteError, compress } from '../../pkg/entries/node.js';
import { createProxy } from '../../pkg/adapters/proxy/index.js';
import { startUpstream } from './support/hosts.mjs';

const HUGE = 'Please review this log line by line. '.repeat(Math.ceil((30 << 20) / 37));
const request = (big) => JSON.stringify({
  model: 'gpt-4o',
  messages: [
    { role: 'system', content: 'You review logs.' },
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
    { role: 'user', content: big },
  ],
});
const OVER = request(HUGE);
const WITHIN = request('one short question');

test('a 30 MB user message comes out with report.overBudget: tokens, budget, the path of the largest message', () => {
  assert.ok(OVER.length > 30e6, `${OVER.length} bytes`);
  const out = compress(OVER, { store: new SpillStore() });
  const over = out.report.overBudget;
  assert.ok(over, 'no overBudget');
  assert.equal(over.budget, 128000);
  assert.equal(over.tokens, out.report.tokensAfter);
  assert.ok(over.tokens > 128000 * 3, `${over.tokens} tokens`);
  assert.equal(over.largest, 'messages[3]');
  assert.ok(over.largestTokens > over.tokens * 0.99 && over.largestTokens <= over.tokens);
  assert.equal(compress(WITHIN, { store: new SpillStore() }).report.overBudget, undefined);
});

test("limits.overBudget: 'error' throws OVER_BUDGET at the largest message's path; within the budget it passes", () => {
  const options = { store: new SpillStore(), limits: { overBudget: 'error' } };
  assert.throws(() => compress(OVER, options), (e) => {
    assert.ok(e instanceof TraceLiteError);
    assert.equal(e.code, 'OVER_BUDGET');
    assert.equal(e.path, 'messages[3]');
    assert.match(e.message, /^messages\[3\]: the request is \d+ tokens after every stage, more than the budget \(128000\)/);
    return true;
  });
  assert.equal(compress(WITHIN, options).report.overBudget, undefined);
  assert.throws(() => compress(WITHIN, { limits: { overBudget: 'warn' } }), (e) => e.code === 'INVALID_OPTION' && /limits\.overBudget/.test(e.path));
});

let upstream;
after(() => upstream?.close());

test("the proxy: x-tracelite-over-budget and onReport once by default; 413 OVER_BUDGET with 'error', whatever onError says, nothing upstream", async () => {
  upstream = await startUpstream(() => ({ headers: { 'content-type': 'application/json' }, chunks: ['{"ok":true}'] }));
  const reports = [];
  const proxy = createProxy({ upstream: upstream.url, maxBodyBytes: 64 << 20, onReport: (r) => reports.push(r.report) });
  const post = (p, body) => p(new Request('http://proxy.test/v1/chat/completions', { method: 'POST', body }));
  const res = await post(proxy, OVER);
  assert.equal(res.status, 200);
  await res.text();
  const over = reports[0]?.overBudget;
  assert.equal(reports.length, 1);
  assert.equal(over.largest, 'messages[3]');
  assert.equal(res.headers.get('x-tracelite-over-budget'), `${over.tokens}/128000 messages[3]`);
  const fine = await post(proxy, WITHIN);
  await fine.text();
  assert.equal(fine.headers.get('x-tracelite-over-budget'), null);
  assert.equal(reports.length, 2);
  assert.equal(reports[1].overBudget, undefined);
  const sent = upstream.received.length;
  for (const onError of ['forward', 'reject']) {
    const strict = createProxy({ upstream: upstream.url, maxBodyBytes: 64 << 20, onError, options: { limits: { overBudget: 'error' } } });
    const refused = await post(strict, OVER);
    assert.equal(refused.status, 413, onError);
    const { error } = await refused.json();
    assert.equal(error.code, 'OVER_BUDGET');
    assert.equal(error.path, 'messages[3]');
  }
  assert.equal(upstream.received.length, sent, 'nothing went upstream');
});
