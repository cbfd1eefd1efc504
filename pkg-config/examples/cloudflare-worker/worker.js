// Cloudflare Worker: compress every LLM request on its way to the provider,
// answer the model's read_spill / grep_spill calls from the spill store, and
// serve spilled output back at GET /spill/<key> (pkg-config/adapters/proxy/proxy.test.mjs runs this file).
import { createProxy } from 'tracelite/proxy';
import { KvSpillStore } from 'tracelite/kv-store';
import { DurableObjectSpillStore } from 'tracelite/do-store';

// With a SPILL_OBJECTS binding (wrangler.toml), spills go to one Durable Object
// per session, which the worker must export.
export { TraceLiteSpillObject } from 'tracelite/do-store';

let proxy;

export default {
  fetch(request, env) {
    proxy ??= createProxy({
      upstream: env.UPSTREAM,
      options: JSON.parse(env.TRACELITE_OPTIONS ?? '{}'),
      // Durable Objects: a read sees every earlier write of its session at once.
      // KV: eventually consistent across locations (a spill written in one may
      // take up to a minute to be readable in another).
      store: env.SPILL_OBJECTS ? new DurableObjectSpillStore(env.SPILL_OBJECTS) : new KvSpillStore(env.SPILLS),
      // Signs session tokens and scopes sessions per client: required with KV
      // (`npx wrangler secret put TRACELITE_SECRET`, e.g. `openssl rand -base64 32`).
      secret: env.TRACELITE_SECRET,
      // 'forward' (default): a request TraceLite cannot compress goes upstream
      // with its secrets masked; 'reject': it gets a JSON error instead.
      onError: env.TRACELITE_ON_ERROR,
      maxBodyBytes: env.MAX_BODY_BYTES ? Number(env.MAX_BODY_BYTES) : undefined,
      maxStoreWrites: env.MAX_STORE_WRITES ? Number(env.MAX_STORE_WRITES) : undefined,
      // Follow-up requests one client request may cause by calling spill tools (default 4).
      maxSpillRounds: env.MAX_SPILL_ROUNDS ? Number(env.MAX_SPILL_ROUNDS) : undefined,
      // This worker's public URL (e.g. https://tracelite.<you>.workers.dev): snapshots go to
      // OpenAI and Anthropic as signed URLs it serves at /image/… instead of inline base64.
      // Prefer the Durable Object store then: the provider fetches at once, KV may lag.
      imageBaseUrl: env.IMAGE_BASE_URL || undefined,
      // Token counts only: request headers (and so API keys) never reach the callback.
      onReport: ({ session, format, path, report }) =>
        console.log('tracelite', JSON.stringify({ session, format, path, before: report.tokensBefore, after: report.tokensAfter })),
    });
    return proxy(request);
  },
};
