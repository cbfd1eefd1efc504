// Types of 'tracelite/proxy': a Fetch-API handler that compresses LLM requests.
import type { CompressSettings, FormatName, Provider, Report, SpillStoreLike } from '../../core/index.js';

export type { SpillStoreLike };

/** Options of `createProxy`. */
export interface ProxyOptions {
  /** Base URL of the provider, e.g. `https://api.openai.com`; the request path is appended. */
  upstream: string | URL;
  /** Force one format for every POST (default: from the path). */
  format?: FormatName;
  /**
   * Compress settings (budget, stages, limits…). `options.provider`, when set,
   * applies to every route without its own `providers` entry.
   */
  options?: CompressSettings;
  /**
   * Provider (prices, image sizes) per route, by its format: `providers[format]`,
   * else `options.provider`, else `DEFAULT_PROVIDERS` (anthropic for
   * `/v1/messages`, openai for the OpenAI routes).
   */
  providers?: Partial<Record<FormatName, Provider>>;
  /**
   * Define `read_spill` / `grep_spill` in a forwarded request that carries a
   * `spill://` pointer of its session (and defines no tool of those names),
   * and answer the model's calls to them: when every call of the model's turn
   * is one of them, the proxy runs them against the session's spills, appends
   * the call and the results to the conversation and asks again (JSON and SSE),
   * so the client only sees the final answer. A turn that also calls the
   * client's tools reaches the client unchanged. Default true.
   */
  spillTools?: boolean;
  /**
   * Most follow-up requests one client request may cause (spill tool rounds).
   * Over it the client gets the model's last response as it came (spill calls
   * included). At least 1 (`spillTools: false` turns the tools off). Default 4.
   */
  maxSpillRounds?: number;
  /**
   * Most bytes of an upstream response held to look for spill calls (a JSON
   * body, or a streamed turn from its first spill call on); a longer one passes
   * on as it came. Default 4 MiB.
   */
  maxSpillResponseBytes?: number;
  /**
   * Work one search of the model's (`grep_spill`) or of the spill route may
   * do, in the core's units (program bytes × bytes the regex runs over, see
   * `SpillStoreOptions.maxGrepCost`); over it `GREP_TOO_COSTLY`. Default 2^24:
   * about 1–15 ms in wasm at the cap (twice on a loaded machine), the longest a search holds other
   * requests up (the tools yield between calls).
   */
  maxSearchCost?: number;
  /**
   * Search work one client request may cause across all its spill rounds and
   * `grep_spill` calls. Once spent, a search gets the tool result
   * `SEARCH_BUDGET_SPENT` (the model sees it) without running. Default 2
   * searches at `maxSearchCost`.
   */
  maxSearchWork?: number;
  /**
   * Search work one session may spend on `GET /spill/<key>/grep` per minute;
   * over it 429 `SEARCH_BUDGET_SPENT` with `retry-after`. Default 8 searches
   * at `maxSearchCost`.
   */
  maxSearchWorkPerMinute?: number;
  /**
   * Milliseconds one tenant (its credentials: `identify`) may spend
   * compressing per minute (wall time of the compress step, store round trips
   * included with an outside store); once spent, its POSTs are refused before
   * their body is read: 429 `COMPRESS_BUDGET_SPENT` with `retry-after`.
   * Default 30,000 (half a core).
   */
  maxCompressMsPerMinute?: number;
  /**
   * With redaction on, the model's spill calls and the spill routes read and
   * search a masked copy of each blob; this many bytes (UTF-16 units) of
   * masked copies are kept between requests, least recently used dropped
   * first. Default 8 MiB.
   */
  maxMaskedBytes?: number;
  /**
   * Where spills go. Default: in memory (per isolate), one store per session for
   * the `maxSessions` most recent sessions. Use a `KvSpillStore` or a
   * `DurableObjectSpillStore` (strongly consistent per session) on Workers.
   */
  store?: SpillStoreLike;
  /**
   * Sessions the default in-memory store keeps. With `store` set, sessions whose
   * caches (rendered snapshots, previous request) stay in memory between turns.
   * Default 64.
   */
  maxSessions?: number;
  /**
   * With `store` set: bytes (UTF-16 code units) of spilled texts the in-memory
   * caches keep once `store` has them (at most 4 MiB per session, the least
   * recently used session's dropped first), so a turn neither hashes nor
   * writes the history's spills again, only what it adds. 0 keeps none.
   * Default 32 MiB.
   */
  maxHeldBytes?: number;
  /**
   * What the sessions held in memory (the default store's, or with `store`
   * set the caches') keep in all: each weighs the larger of 7× its last
   * request's bytes and its spills and caches; past it the least recently
   * used sessions are freed (their spills read as expired, `SPILL_NOT_FOUND`).
   * Default `MEMORY_DEFAULTS.maxMemoryBytes`: 192 MiB, 8 MiB on workerd.
   */
  maxMemoryBytes?: number;
  /** The fetch used to reach the upstream. Default `globalThis.fetch`. */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Larger request bodies get 413. Default `MEMORY_DEFAULTS.maxBodyBytes`:
   * 8 MiB, 2 MiB on workerd (a request's wasm peak is up to about 20× its body).
   */
  maxBodyBytes?: number;
  /**
   * Most blobs one request may write to an outside `store`, written
   * `STORE_BATCH` (16) at a time; a put the store skips (already stored) does
   * not count. Over it: `STORE_WRITE_LIMIT` (413 with `onError: 'reject'`,
   * else the request is forwarded uncompressed). Default 200.
   */
  maxStoreWrites?: number;
  /**
   * A request the proxy cannot compress (the core cannot read it,
   * `STORE_FAILED`, `STORE_WRITE_LIMIT`): `'forward'` (default) sends it
   * upstream uncompressed with the secrets in its string values masked
   * (unless `options.redact.enabled` is false), marked
   * `x-tracelite-skipped: <code>` and `x-tracelite-redacted: <n>`; `'reject'`
   * answers with the typed JSON error (400, 413 or 503) and sends nothing.
   * Bad JSON, `LIMIT_EXCEEDED` and `OVER_BUDGET` (`options.limits.overBudget:
   * 'error'`: 413) are always rejected. A request over budget by default is
   * forwarded with `x-tracelite-over-budget: <tokens>/<budget> <path>`.
   */
  onError?: 'forward' | 'reject';
  /**
   * Key (at least 32 characters) of the HMAC that derives sessions (from the
   * caller's identity and its session name or the conversation's opening) and
   * signs the session tokens the spill routes require. Required with an
   * outside `store`; with the in-memory store it defaults to 32 random bytes
   * per instance. Whoever knows it can read every session: keep it a secret
   * (`wrangler secret put TRACELITE_SECRET`).
   */
  secret?: string;
  /**
   * The caller's identity, an HMAC input scoping its sessions (never logged or
   * stored). Default `defaultIdentity`: the Authorization, x-api-key and
   * x-goog-api-key headers and Gemini's `?key=`. Return e.g. the user id your
   * own auth established when clients do not send provider keys.
   */
  identify?: (request: Request) => string | Promise<string>;
  /**
   * Public base URL of this proxy as the provider reaches it (`https`; `http` only for localhost), e.g.
   * `https://tracelite.example.workers.dev`. Set, snapshots go to OpenAI (chat, responses) and Anthropic
   * by URL instead of inline base64: each PNG is stored in `store` as `image-<id>` of the request's
   * session (counted against `maxStoreWrites` and the store's own per-session limits) and served at
   * `GET <imageBaseUrl>/image/<session>/<id>.png?sig=<HMAC of session and id>`, without a session header
   * (the provider fetches it): wrong or missing `sig` → 403 `INVALID_IMAGE_SIGNATURE`, signed but not
   * stored → 404 `IMAGE_NOT_FOUND`, anything else under the route → 404 `NOT_FOUND`. When the images
   * cannot be stored, the request goes with its snapshots inline (`x-tracelite-images: inline; <code>`).
   * Default: off (inline).
   */
  imageBaseUrl?: string | URL;
  /**
   * With an outside `store`: keep each request's rendered snapshots and token
   * counts in the session (a `cache-<hash>` segment beside its spills) and
   * import them on an isolate new to the session, so it does not render or
   * count them again. Default: true.
   */
  persistCache?: boolean;
  /** Called after each compression (never with headers); `bytes`: the body received and the body sent upstream. */
  onReport?: (info: {
    session: string;
    format: FormatName;
    path: string;
    report: Report;
    bytes: { received: number; sent: number };
    /**
     * With an outside store: snapshots this request rendered, and (on the
     * session's first request in this isolate) what `persistCache` imported.
     */
    cache?: { rendered: number; loaded?: { segments: number; snapshots: number; counts: number } };
  }) => void;
  /**
   * Each compressed request's report as a few lines of text (`formatReport`,
   * labelled with the session): `true` writes it to `console.error`, a
   * function gets it. Default off. (With `createThreadedProxy`, set it in the
   * settings module: a function cannot cross into a thread as `data`.)
   */
  debug?: boolean | ((text: string) => void);
}

/**
 * Paths (suffixes, ASCII case ignored, matched on the normalized path) the
 * proxy compresses, with their format: chat completions, responses (and
 * `input_tokens`), messages (and `count_tokens`).
 */
export const ROUTES: [string, FormatName][];
/** Gemini methods compressed as `gemini` (`…/models/<model>:<method>`). */
export const GEMINI_METHODS: string[];
/** Conversation routes the proxy cannot compress (batches, legacy completions, raw predict): 400 `UNSUPPORTED_ROUTE`. */
export const REFUSED_ROUTES: string[];
/** Default `maxSearchCost` (2^24). */
export const DEFAULT_MAX_SEARCH_COST: number;
/** Default `maxSearchWork`, in searches at `maxSearchCost` (2). */
export const DEFAULT_SEARCHES_PER_REQUEST: number;
/** Default `maxSearchWorkPerMinute`, in searches at `maxSearchCost` (8). */
export const DEFAULT_SEARCHES_PER_MINUTE: number;
/** Default `maxCompressMsPerMinute` (30,000 ms: half a core per tenant). */
export const DEFAULT_COMPRESS_MS_PER_MINUTE: number;
/** Default `maxMaskedBytes` (8 MiB). */
export const DEFAULT_MAX_MASKED_BYTES: number;
/**
 * A path as an upstream server may read it (escapes decoded, dot segments
 * resolved, double and trailing slashes dropped); `ambiguous` when decoding
 * made segments (`%2f`, `%2e%2e`): such requests get 400 `INVALID_PATH`.
 */
export function normalizePath(pathname: string): { path: string; ambiguous: boolean };
/** Provider of each route's format when neither `providers` nor `options.provider` names one. */
export const DEFAULT_PROVIDERS: Readonly<Record<FormatName, Provider>>;
/** Default `maxSpillRounds` (4). */
export const DEFAULT_MAX_SPILL_ROUNDS: number;
/** Spill calls answered per model turn (16); the others get an error result. */
export const MAX_SPILL_CALLS: number;
/** Default `maxSpillResponseBytes` (4 MiB). */
export const DEFAULT_MAX_SPILL_RESPONSE_BYTES: number;
/** Default `maxBodyBytes`. */
export const DEFAULT_MAX_BODY_BYTES: number;
/** `x-tracelite-session`: names the spill session of a request; carries the session token in responses. */
export const SESSION_HEADER: string;
/** Default `maxStoreWrites` (200). */
export const DEFAULT_MAX_STORE_WRITES: number;
/** The image route under `imageBaseUrl`'s path: `/image/`. */
export const IMAGE_ROUTE: string;
/** `cache-control` of a served image. */
export const IMAGE_CACHE_CONTROL: string;
/** Shortest `secret` accepted (32 characters). */
export const MIN_SECRET_LENGTH: number;
/** The `onError` choices. */
export const ON_ERROR: readonly ['forward', 'reject'];
/** The default `identify`: the request's provider credentials, as one string (an HMAC input only). */
export function defaultIdentity(request: Request): string;

/** Session derivation and tokens with one key (what `createProxy` uses). */
export interface SessionSigner {
  /** `<name (≤ 95 chars)>-<32 hex>` for a named session, `conv-<32 hex>` from a conversation opening (JSON text). */
  session(identity: string, from: { name: string } | { opening: string }): Promise<string>;
  /**
   * `<session>.<tenant>.<43 base64url chars of HMAC-SHA256>` (what the proxy issues: the tenant's
   * budgets apply to whoever holds it); without `tenant`, `<session>.<signature>` (budgets per session).
   */
  token(session: string, tenant?: string): Promise<string>;
  /** Whether a value has the shape of a token. */
  isToken(value: string): boolean;
  /** The session of a genuine token, else `undefined` (constant-time check). */
  verify(token: string): Promise<string | undefined>;
  /** The session and tenant of a genuine token (`tenant` undefined for one without), else `undefined`. */
  verifyToken(token: string): Promise<{ session: string; tenant: string | undefined } | undefined>;
  /** A tenant's key (32 hex digits): an HMAC of its identity. */
  tenant(identity: string): Promise<string>;
  /** The `sig` of an image URL: 43 base64url chars of an HMAC of the session and the image id. */
  imageSignature(session: string, id: string): Promise<string>;
  /** Whether `signature` is the one of (session, id) (constant-time check). */
  verifyImage(session: string, id: string, signature: string | null): Promise<boolean>;
}
/** A signer keyed with `secret` (or 32 random bytes when `undefined`). */
export function sessionSigner(secret?: string): SessionSigner;

/**
 * A Fetch-API handler: compresses `POST …/v1/chat/completions`, `…/v1/responses`
 * and `…/v1/messages`, forwards to `upstream` with the headers intact, streams
 * the response back (unchanged, unless the model's turn only calls the spill
 * tools the proxy defined: see `spillTools`) with `x-tracelite-session: <token>`, and serves
 * `GET /spill/<key>?offset=&limit=` and `GET /spill/<key>/grep?q=&context=&max=&regex=1`
 * for the session whose token is in the `x-tracelite-session` header (401
 * `MISSING_SESSION` without, 403 `INVALID_SESSION_TOKEN` for a forged one).
 * With `imageBaseUrl`, snapshots go upstream as signed URLs it serves at
 * `GET <imageBaseUrl path>/image/<session>/<id>.png?sig=…` (see `imageBaseUrl`).
 * Bad JSON → 400, too large → 413. Throws `INVALID_OPTION` (path `secret`)
 * when an outside `store` is given without `secret`.
 */
export function createProxy(options: ProxyOptions): (request: Request) => Promise<Response>;
