// Issue 36 item 5: errors by fault. Every error the package throws is the
// `TraceLiteError` subclass of its code's group (the core's groups from
// src/error.rs, the host's codes from core/errors.js), keeps its stable
// `code` and `path`, and `instanceof` holds whichever module threw it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  HostError, InputError, InternalError, LimitError, OptionError, ProxyError, SpillStore, StoreError, TraceLiteError,
  TraceLite, compress,
} from '../../pkg/entries/node.js';
import { toChatRequest } from '../../pkg/adapters/ai-sdk/index.js';
import { FileStore } from '../../pkg/adapters/file-store/index.js';
import { FileStore as UnsupportedFileStore } from '../../pkg/adapters/file-store/unsupported.js';
import { createProxy } from '../../pkg/adapters/proxy/index.js';

const REQUEST = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

/** An `assert.throws` matcher: class, code and path, and the base class. */
const is = (Class, code, path) => (err) => {
  assert.ok(err instanceof Class, `${err?.constructor?.name} ${err?.code}: ${err?.message}`);
  assert.ok(err instanceof TraceLiteError && err instanceof Error);
  assert.equal(err.name, 'TraceLiteError', 'the name stays the documented one');
  assert.equal(err.code, code);
  if (path !== undefined) assert.equal(err.path, path);
  return true;
};

test('a bad option from the core is an OptionError with INVALID_OPTION and the option\'s path', () => {
  assert.throws(() => compress(REQUEST, { spill: { fraction: 2 } }), is(OptionError, 'INVALID_OPTION', 'spill.fraction'));
  assert.throws(() => compress(REQUEST, { optical: { bitDepth: 3 } }), is(OptionError, 'INVALID_OPTION', 'optical.bitDepth'));
  assert.throws(() => compress(REQUEST, { spill: { detectors: [{ tool: 'x', tests: ['^BROKE '] }] } }), is(OptionError, 'INVALID_OPTION', 'spill.detectors[0].tests[0]'));
  assert.throws(() => compress(REQUEST, { budget: -5 }), (err) => is(OptionError, 'INVALID_OPTION', 'budget')(err)
    && err.message === 'budget: must be a non-negative integer, got -5' && err.group === 'option');
  // Raised by the JS before the wasm runs: the same class.
  assert.throws(() => compress(REQUEST, { session: 5 }), is(OptionError, 'INVALID_OPTION', 'session'));
  assert.throws(() => new TraceLite({ countTokens: 5 }), is(OptionError, 'INVALID_OPTION', 'countTokens'));
});

test('a limit is a LimitError, bad input an InputError, a failing counter an InternalError', () => {
  const many = { model: 'm', messages: Array.from({ length: 3 }, () => ({ role: 'user', content: 'x' })) };
  assert.throws(() => compress(many, { limits: { maxMessages: 2 } }), (err) => is(LimitError, 'LIMIT_EXCEEDED')(err) && err.group === 'limit');
  assert.throws(() => compress(many, { spill: { errorPatterns: Array(65).fill('x') } }), is(LimitError, 'LIMIT_EXCEEDED', 'spill.errorPatterns'));
  assert.throws(() => compress('{"messages": [', {}), is(InputError, 'INVALID_JSON'));
  assert.throws(() => compress({ nothing: 1 }, {}), is(InputError, 'UNKNOWN_FORMAT'));
  assert.throws(() => toChatRequest(5), is(InputError, 'INVALID_ARGUMENT', 'prompt'));
  assert.throws(() => compress(REQUEST, { countTokens: () => Number.NaN }), is(InternalError, 'COUNTER_FAILED', 'countTokens'));
});

test('a store failure is a StoreError: a missing spill from the core, an unsafe directory from the FileStore', async () => {
  const store = new SpillStore();
  try {
    assert.throws(() => store.get('s', 'tool-0123abcd'), (err) => is(StoreError, 'SPILL_NOT_FOUND')(err) && err.group === 'store');
  } finally {
    store.free();
  }
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-errors-'));
  mkdirSync(join(dir, 'outside'));
  const files = new FileStore({ root: join(dir, 'root') });
  await files.put('mine', 'k', 'x');
  symlinkSync(join(dir, 'outside'), join(dir, 'root', 'evil'));
  await assert.rejects(files.put('evil', 'k', 'text'), is(StoreError, 'STORE_UNSAFE'));
});

test('the host\'s codes have their classes: a proxy session error is a ProxyError, a missing filesystem a HostError', async () => {
  assert.throws(() => new UnsupportedFileStore({ root: '/tmp/x' }), (err) => is(HostError, 'UNSUPPORTED_HOST')(err) && err.group === 'host');
  const proxy = createProxy({ upstream: 'http://127.0.0.1:9', options: { budget: 8000 } });
  const missing = await proxy(new Request('http://proxy.test/spill/tool-0123abcd'));
  assert.equal(missing.status, 401);
  const forged = await proxy(new Request('http://proxy.test/spill/tool-0123abcd', { headers: { 'x-tracelite-session': `s.${'A'.repeat(43)}` } }));
  assert.equal(forged.status, 403);
  for (const [res, code] of [[missing, 'MISSING_SESSION'], [forged, 'INVALID_SESSION_TOKEN']]) {
    const { error } = await res.json();
    const err = TraceLiteError.from(error);
    assert.ok(is(ProxyError, code, 'x-tracelite-session')(err));
    assert.equal(err.message, error.message);
    assert.equal(err.group, 'proxy');
  }
  // A body a core code answers (a bad option on the proxy is refused by createProxy itself).
  assert.throws(() => createProxy({ upstream: 'not a url' }), is(OptionError, 'INVALID_OPTION', 'upstream'));
  // Any code rebuilds as its class; an unknown one stays a plain TraceLiteError.
  assert.ok(TraceLiteError.from({ code: 'STORE_WRITE_LIMIT', message: 'm' }) instanceof LimitError);
  assert.ok(TraceLiteError.from({ code: 'RENDER_FAILED' }) instanceof InternalError);
  const unknown = TraceLiteError.from({ code: 'SOMETHING_ELSE', message: 'm', path: 'p' });
  assert.equal(unknown.constructor, TraceLiteError);
  assert.equal(unknown.group, undefined);
});

test('every entry and adapter throws the same classes (instanceof holds across the package\'s modules)', async () => {
  const core = await import('../../pkg/core/api.js');
  const errors = await import('../../pkg/core/errors.js');
  for (const name of ['TraceLiteError', 'InputError', 'OptionError', 'LimitError', 'StoreError', 'InternalError', 'ProxyError', 'HostError']) {
    assert.equal(core[name], errors[name], name);
  }
  assert.equal(core.OptionError, OptionError, 'the node entry re-exports the core\'s classes');
  // An adapter's error (it imports core/errors.js itself) is an instance of the entry's class.
  assert.throws(() => toChatRequest(null), (err) => err instanceof InputError && err instanceof core.TraceLiteError);
  // The proxy imports its classes through `#entry`: the same ones.
  assert.throws(() => createProxy({ upstream: 'https://x', onError: 'maybe' }), (err) => err instanceof OptionError);
});
