// Cloudflare Worker: compress every LLM request on its way to the provider and
// serve spilled output back at GET /spill/<key> (tests/js/proxy.test.mjs runs this file).
import { createProxy } from 'tracelite/proxy';
import { KvSpillStore } from 'tracelite/kv-store';

let proxy;

export default {
  fetch(request, env) {
    proxy ??= createProxy({
      upstream: env.UPSTREAM,
      options: JSON.parse(env.TRACELITE_OPTIONS ?? '{}'),
      store: new KvSpillStore(env.SPILLS),
      // Signs session tokens and scopes sessions per client: required with KV
      // (`npx wrangler secret put TRACELITE_SECRET`, e.g. `openssl rand -base64 32`).
      secret: env.TRACELITE_SECRET,
      // 'forward' (default): a request TraceLite cannot compress goes upstream
      // with its secrets masked; 'reject': it gets a JSON error instead.
      onError: env.TRACELITE_ON_ERROR,
      maxBodyBytes: env.MAX_BODY_BYTES ? Number(env.MAX_BODY_BYTES) : undefined,
      maxStoreWrites: env.MAX_STORE_WRITES ? Number(env.MAX_STORE_WRITES) : undefined,
      // Token counts only: request headers (and so API keys) never reach the callback.
      onReport: ({ session, format, path, report }) =>
        console.log('tracelite', JSON.stringify({ session, format, path, before: report.tokensBefore, after: report.tokensAfter })),
    });
    return proxy(request);
  },
};
