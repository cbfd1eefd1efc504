// Types of 'tracelite/openai-agents': an OpenAI Agents SDK `callModelInputFilter`
// and the spill tools, in the installed `@openai/agents` package's own types,
// so `run(agent, input, { callModelInputFilter })` and `new Agent({ tools })`
// accept them under `tsc --strict`.
import type { AgentInputItem, CallModelInputFilter, CallModelInputFilterArgs, FunctionTool, ModelInputData } from '@openai/agents';
import type { CompressSettings, Report } from '../../core/index.js';
import type { SpillStoreLike } from '../proxy/index.js';

/** Options of `traceliteInputFilter`: compress settings plus host objects. */
export interface TraceliteInputFilterOptions extends Omit<CompressSettings, 'format' | 'session'> {
  /**
   * Where spills go. Default: in memory, one store per conversation, for the
   * `maxSessions` most recent conversations; see `filter.store`.
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
  /** Spill session: a name or a function of the filter's arguments; default: a hash of the conversation's opening. */
  session?: string | ((args: CallModelInputFilterArgs<any>) => string);
  /** Called after each compression. */
  onReport?: (info: { session: string; report: Report }) => void;
  /**
   * Each turn's report as a few lines of text (`formatReport`, labelled with
   * the session): `true` writes it to `console.error`, a function gets it.
   * Default off.
   */
  debug?: boolean | ((text: string) => void);
}

/** A `callModelInputFilter` that compresses the model input, plus the store its spills go to. */
export type TraceliteInputFilter = {
  (args: CallModelInputFilterArgs<any>): Promise<ModelInputData>;
  /** The store spills go to: pass it to `spillTools`. */
  readonly store: SpillStoreLike;
} & CallModelInputFilter<any>;

/** A `callModelInputFilter` (run options or `new Runner({ ... })`) that compresses every model call's input. */
export function traceliteInputFilter(options?: TraceliteInputFilterOptions): TraceliteInputFilter;

/**
 * `read_spill` and `grep_spill` as Agents SDK function tools over `store`, for
 * `new Agent({ tools })`. With `session`, only that session's spills are readable.
 */
export function spillTools(store: SpillStoreLike, options?: { session?: string }): [FunctionTool<any, any, string>, FunctionTool<any, any, string>];

/** The SDK model input as an OpenAI Responses request, plus what restores untouched items. */
export function toResponsesRequest(items: AgentInputItem[], instructions?: string): { request: { input: unknown[]; instructions?: string }; side: unknown };
/** A (compressed) Responses request made by `toResponsesRequest` back into the SDK model input. */
export function fromResponsesRequest(request: { input: unknown[] | string; instructions?: string }, side: unknown): ModelInputData;
