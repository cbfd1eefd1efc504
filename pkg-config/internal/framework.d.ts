// Types shared by the framework adapters (ai-sdk, langchain, openai-agents):
// the arguments of the core's spill tools. No framework types here, so every
// adapter's types can use them without loading another framework's.

/** Arguments of `read_spill` (the core's schema). */
export interface ReadSpillArgs {
  /** The spill:// pointer from the placeholder. */
  pointer: string;
  /** Lines to skip (default 0). */
  offset?: number;
  /** Most lines to return (default 200, at most 2000). */
  limit?: number;
  /** Bytes to skip in the first line (to continue a very long line). */
  column?: number;
}

/** Arguments of `grep_spill`: the core's schema, snake case, as the model sends them. */
export interface GrepSpillArgs {
  /** The spill:// pointer from the placeholder. */
  pointer: string;
  /** Regular expression (the core's dialect), or plain text with `literal`. */
  pattern: string;
  literal?: boolean;
  /** Case-insensitive (default false). */
  ignore_case?: boolean;
  /** Lines of context around each match (default 2, at most 10). */
  context?: number;
  /** Most matching lines to return (default 50, at most 200). */
  max_matches?: number;
  /** Matching lines to skip (to see further matches). */
  skip?: number;
}
