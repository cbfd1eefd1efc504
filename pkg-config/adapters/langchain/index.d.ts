// Types of 'tracelite/langchain': a LangChain.js (langchain v1) agent middleware
// and the spill tools, in the installed `langchain` package's own types, so
// `createAgent({ middleware, tools })` accepts them under `tsc --strict`.
import type { AgentMiddleware, BaseMessage, DynamicStructuredTool, ModelRequest, SystemMessage } from 'langchain';
import type { CompressSettings, Report } from '../../core/index.js';
import type { SpillStoreLike } from '../proxy/index.js';
import type { GrepSpillArgs, ReadSpillArgs } from '../../internal/framework.js';

/** Options of `traceliteMiddleware`: compress settings plus host objects. */
export interface TraceliteLangChainOptions extends Omit<CompressSettings, 'format' | 'session'> {
  /**
   * Where spills go. Default: in memory, one store per conversation (its own
   * spills, caches and previous request), for the `maxSessions` most recent
   * conversations; see `middleware.store`.
   */
  store?: SpillStoreLike;
  /**
   * `'path'`: pointers are the files of a `store` that keeps spills as files
   * (`FileStore`), so the model can read them with its own tools; `'spill'`
   * (default): `spill://` pointers, read with `read_spill` / `grep_spill`.
   */
  pointer?: 'spill' | 'path';
  /** Conversations the default store (or, with `store`, the caches) keeps. Default 64. */
  maxSessions?: number;
  /**
   * With a `store` that can `list` (KV, a Durable Object store): the host's
   * secret (at least 16 bytes) that seals the session caches (rendered
   * snapshots, token counts) kept in it as segments, so a new isolate does not
   * render them again; a segment that does not verify is skipped. Without it
   * they are not kept.
   */
  cacheKey?: string | Uint8Array;
  /** Spill session: a name or a function of the model request; default: a hash of the conversation's opening. */
  session?: string | ((request: ModelRequest) => string);
  /** Called after each compression. */
  onReport?: (info: { session: string; report: Report }) => void;
  /**
   * Each turn's report as a few lines of text (`formatReport`, labelled with
   * the session): `true` writes it to `console.error`, a function gets it.
   * Default off.
   */
  debug?: boolean | ((text: string) => void);
  /** Register `read_spill` and `grep_spill` with the agent (over `middleware.store`). Default true. */
  spillTools?: boolean;
}

/** An agent middleware (compresses in `wrapModelCall`), plus the store its spills go to. */
export type TraceliteLangChainMiddleware = AgentMiddleware & {
  /** The store spills go to: pass it to `spillTools` (the middleware's own tools read it). */
  readonly store: SpillStoreLike;
};

/**
 * Middleware for `createAgent({ middleware })` that compresses the messages of
 * every model call without rewriting the agent's state.
 */
export function traceliteMiddleware(options?: TraceliteLangChainOptions): TraceliteLangChainMiddleware;

export type { GrepSpillArgs, ReadSpillArgs } from '../../internal/framework.js';

/** A LangChain tool whose `invoke` resolves the reply text. */
export type SpillTool<Args> = DynamicStructuredTool & {
  invoke(input: Args): Promise<string>;
};

/**
 * `read_spill` and `grep_spill` as LangChain tools over `store`, for
 * `createAgent({ tools })`. With `session`, only that session's spills are readable.
 */
export function spillTools(store: SpillStoreLike, options?: { session?: string }): [SpillTool<ReadSpillArgs>, SpillTool<GrepSpillArgs>];

/** LangChain messages (and the system message) as an OpenAI Chat request, plus what restores untouched ones. */
export function toChatMessages(messages: BaseMessage[], systemMessage?: SystemMessage): { request: { messages: unknown[] }; side: unknown };
/** A (compressed) Chat request made by `toChatMessages` back into LangChain messages. */
export function fromChatMessages(request: { messages: unknown[] }, side: unknown): { messages: BaseMessage[]; systemMessage?: SystemMessage };
