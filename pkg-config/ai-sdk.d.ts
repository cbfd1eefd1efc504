// Types of 'tracelite/ai-sdk': Vercel AI SDK middleware and spill tools.
// Structural types, so the package does not need `ai`'s types to type-check.
import type { CompressSettings, Report } from './index.js';
import type { SpillStoreLike } from './proxy.js';

/** Options of `traceliteMiddleware`: compress settings plus host objects. */
export interface TraceliteMiddlewareOptions extends Omit<CompressSettings, 'format' | 'session'> {
  /**
   * Where spills go. Default: in memory, one store per conversation (its own
   * spills, caches and previous request, so `report.prefix` is filled), for the
   * `maxSessions` most recent conversations; see `middleware.store`.
   */
  store?: SpillStoreLike;
  /**
   * Conversations the default store keeps (least recently used freed first). With
   * `store` set, conversations whose caches (rendered snapshots, previous request;
   * no spilled text) stay in memory between turns. Default 64.
   */
  maxSessions?: number;
  /** Spill session: a name or a function of the call; default: a hash of the conversation's opening. */
  session?: string | ((params: { prompt: unknown[] } & Record<string, unknown>) => string);
  /** Called after each compression. */
  onReport?: (info: { session: string; report: Report; type: 'generate' | 'stream' }) => void;
  /** Middleware/prompt spec: 'v4' (ai 7, default) or 'v3' (ai 6). */
  specificationVersion?: 'v4' | 'v3';
}

/** A language-model middleware for `wrapLanguageModel` (compresses in `transformParams`). */
export interface TraceliteMiddleware {
  readonly specificationVersion: 'v4' | 'v3';
  /** The store spills go to: pass it to `spillTools`. */
  readonly store: SpillStoreLike;
  transformParams(options: { type: 'generate' | 'stream'; params: any; model?: unknown }): Promise<any>;
}

/** Middleware that compresses every prompt before it reaches the model. */
export function traceliteMiddleware(options?: TraceliteMiddlewareOptions): TraceliteMiddleware;

/** An AI SDK tool (as made by `tool()` from 'ai'). */
export interface SpillTool<Input> {
  description: string;
  inputSchema: unknown;
  execute(input: Input, options?: unknown): Promise<string>;
}

/**
 * `read_spill` and `grep_spill` tools over `store`, for `generateText({ tools })`.
 * With `session`, only that session's spills are readable.
 */
export function spillTools(store: SpillStoreLike, options?: { session?: string }): {
  read_spill: SpillTool<{ pointer: string; offset?: number; limit?: number }>;
  grep_spill: SpillTool<{ pointer: string; pattern: string; context?: number; maxMatches?: number; ignoreCase?: boolean }>;
};

/** The AI SDK prompt as an OpenAI Chat request, plus what restores untouched parts. */
export function toChatRequest(prompt: unknown[]): { request: { messages: unknown[] }; side: unknown };
/** A (compressed) Chat request made by `toChatRequest` back into an AI SDK prompt. */
export function fromChatRequest(request: { messages: unknown[] }, side: unknown, version?: 'v4' | 'v3'): unknown[];
