// Vercel Edge (Next.js App Router): the same proxy as the Worker example.
// The package's `edge-light` entry loads the wasm with `import … from '…wasm?module'`,
// as Edge Functions require. Spills go to Upstash Redis (Vercel's KV) through
// RedisStore, which runs its Lua scripts over the REST client's eval/evalsha:
// the quotas per session and tenant hold across every instance.
//   npm install tracelite @upstash/redis
//   env: UPSTREAM=https://api.openai.com, UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN,
//   TRACELITE_SECRET (at least 32 characters, e.g. `openssl rand -base64 32`; keep it secret)
import { Redis } from '@upstash/redis';
import { createProxy } from 'tracelite/proxy';
import { RedisStore } from 'tracelite/redis-store';

export const runtime = 'edge';

// Spills are text: keep Upstash from parsing JSON-looking values.
const redis = new Redis({
  url: process.env.UPSTASH_REDIS_REST_URL,
  token: process.env.UPSTASH_REDIS_REST_TOKEN,
  automaticDeserialization: false,
});

const proxy = createProxy({
  upstream: process.env.UPSTREAM,
  options: { budget: 128000, provider: 'openai' },
  store: new RedisStore({ client: redis, prefix: 'tracelite:' }),
  // Signs session tokens and scopes sessions per client (see SECURITY.md).
  secret: process.env.TRACELITE_SECRET,
});

export const GET = proxy;
export const POST = proxy;
