// The status line's text after a run (pure: unit-tested without a browser).

const fmt = (n) => Number(n).toLocaleString('en-US');
const pct = (x) => `${(x * 100).toFixed(1)}%`;

/** Names of the request formats. */
export const FORMAT_NAMES = {
  'openai-chat': 'OpenAI Chat Completions',
  'openai-responses': 'OpenAI Responses',
  anthropic: 'Anthropic Messages',
  gemini: 'Gemini generateContent',
};

/** Each provider's own request format. */
export const PROVIDER_FORMATS = {
  openai: 'openai-chat', 'openai-patch': 'openai-chat', qwen: 'openai-chat', anthropic: 'anthropic', gemini: 'gemini',
};

/**
 * The status line after a run: what ran, in which request format, for the
 * selected provider (named with its own format when that differs), and the figures.
 */
export function doneStatus(kind, format, provider, summary) {
  const what = kind === 'trajectory'
    ? `Replayed ${summary.steps} step${summary.steps === 1 ? '' : 's'} as ${FORMAT_NAMES[format] ?? format} requests`
    : `Compressed the ${FORMAT_NAMES[format] ?? format} request`;
  const own = PROVIDER_FORMATS[provider];
  const native = own === format ? `its own format` : `its own format is ${FORMAT_NAMES[own] ?? own}`;
  return `${what} for ${provider} (${native}): ${fmt(summary.baseline_tokens)} → ${fmt(summary.compressed_tokens)} tokens, ` +
    `${pct(summary.reduction)} less.`;
}
