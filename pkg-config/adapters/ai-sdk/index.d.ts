// Types of 'tracelite/ai-sdk': Vercel AI SDK middleware and spill tools, in the
// installed `ai` package's own types (ai 6: LanguageModelV3Middleware; ai 7:
// LanguageModelMiddleware of LanguageModelV4), so `wrapLanguageModel` and
// `generateText({ tools })` accept them under `tsc --strict` with either.
// Like `ai`'s own types, these need `@types/node`.
import type { LanguageModelMiddleware, Tool } from 'ai';
import type { CompressSettings, Report } from '../../core/index.js';
import type { SpillStoreLike } from '../proxy/index.js';
import type { GrepSpillArgs, ReadSpillArgs } from '../../internal/framework.js';

/** Options of `traceliteMiddleware`: compress settings plus host objects. */
export interface TraceliteMiddlewareOptions extends Omit<CompressSettings, 'format' | 'session'> {
  /**
   * Where spills go. Default: in memory, one store per conversation (its own
   * spills, caches and previous request, so `report.prefix` is filled), for the
   * `maxSessions` most recent conversations; see `middleware.store`.
   */
  store?: SpillStoreLike;
  /**
   * `'path'`: pointers are the files of a `store` that keeps spills as files
   * (`FileStore`), so the model can read them with its own tools; `'spill'`
   * (default): `spill://` pointers, read with `read_spill` / `grep_spill`.
   */
  pointer?: 'spill' | 'path';
  /**
   * Conversations the default store keeps (least recently used freed first). With
   * `store` set, conversations whose caches (rendered snapshots, previous request)
   * stay in memory between turns. Default 64.
   */
  maxSessions?: number;
  /**
   * With a `store` that can `list` (KV, a Durable Object store): the host's
   * secret (at least 16 bytes) that seals the session caches (rendered
   * snapshots, token counts) kept in it as segments, so a new isolate does not
   * render them again; a segment that does not verify is skipped. Without it
   * they are not kept.
   */
  cacheKey?: string | Uint8Array;
  /**
   * With `store` set: bytes (UTF-16 code units) of spilled texts the in-memory
   * caches keep once `store` has them (at most 4 MiB per conversation), so a
   * turn neither hashes nor writes the history's spills again. 0 keeps none.
   * Default 32 MiB.
   */
  maxHeldBytes?: number;
  /**
   * What the conversations held in memory keep in all: each weighs the larger
   * of 7× its last request's bytes and its spills and caches; past it the
   * least recently used are freed (their spills read as expired). Default
   * `MEMORY_DEFAULTS.maxMemoryBytes`: 192 MiB, 8 MiB on workerd.
   */
  maxMemoryBytes?: number;
  /** Spill session: a name or a function of the call; default: a hash of the conversation's opening. */
  session?: string | ((params: CallOptions) => string);
  /** Called after each compression. */
  onReport?: (info: { session: string; report: Report; type: 'generate' | 'stream' }) => void;
  /**
   * Each turn's report as a few lines of text (`formatReport`, labelled with
   * the session): `true` writes it to `console.error`, a function gets it.
   * Default off.
   */
  debug?: boolean | ((text: string) => void);
  /**
   * Middleware spec: by default the installed `ai`'s ('v3' with ai 6, 'v4' with
   * ai 7); ai 7 also takes 'v3'. The prompt is always converted to the spec of the
   * model `transformParams` is given.
   */
  specificationVersion?: MiddlewareSpec;
}

/** The options of a model call, as `transformParams` gets them (`params.prompt` is the prompt). */
export type CallOptions = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];

/** The middleware specs the installed `ai` accepts: 'v3' (ai 6), 'v3' | 'v4' (ai 7). */
export type MiddlewareSpec = Extract<'v3' | 'v4', NonNullable<LanguageModelMiddleware['specificationVersion']>>;

/**
 * A language-model middleware for `wrapLanguageModel` (compresses in
 * `transformParams`): the installed `ai`'s `LanguageModelMiddleware`, plus the store.
 */
export type TraceliteMiddleware = LanguageModelMiddleware & {
  readonly specificationVersion: MiddlewareSpec;
  /** The store spills go to: pass it to `spillTools`. */
  readonly store: SpillStoreLike;
  transformParams: NonNullable<LanguageModelMiddleware['transformParams']>;
};

/** Middleware that compresses every prompt before it reaches the model. */
export function traceliteMiddleware(options?: TraceliteMiddlewareOptions): TraceliteMiddleware;

/** An AI SDK tool (made by `tool()` from 'ai') whose `execute` resolves the reply text. */
export type SpillTool<Input> = {
  description: string;
  execute(input: Input, options?: Parameters<NonNullable<Tool<Input, string>['execute']>>[1]): Promise<string>;
} & Tool<Input, string>;

/** Arguments of `read_spill` (the core's schema). */
export type ReadSpillInput = ReadSpillArgs;

/**
 * Arguments of `grep_spill`: the core's schema, snake case, as the model sends
 * them. A direct `execute` call may also spell `max_matches` and `ignore_case`
 * in camel case (the snake-case name wins when both are given).
 */
export interface GrepSpillInput extends GrepSpillArgs {
  /** Alias of `max_matches`. */
  maxMatches?: number;
  /** Alias of `ignore_case`. */
  ignoreCase?: boolean;
}

/**
 * `read_spill` and `grep_spill` tools over `store`, for `generateText({ tools })`.
 * With `session`, only that session's spills are readable.
 */
export function spillTools(store: SpillStoreLike, options?: { session?: string }): {
  read_spill: SpillTool<ReadSpillInput>;
  grep_spill: SpillTool<GrepSpillInput>;
};

/** The AI SDK prompt as an OpenAI Chat request, plus what restores untouched parts. */
export function toChatRequest(prompt: unknown[]): { request: { messages: unknown[] }; side: unknown };
/** A (compressed) Chat request made by `toChatRequest` back into an AI SDK prompt. */
export function fromChatRequest(request: { messages: unknown[] }, side: unknown, version?: 'v4' | 'v3'): unknown[];
