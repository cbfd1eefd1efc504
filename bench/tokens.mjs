// Token accounting for the benchmark: exact o200k_base text counts (js-tiktoken,
// cached per distinct text) and each provider's image formula (a port of
// src/tokens.rs `image_tokens`; bench/tokens.test values pin the two together).
import { getEncoding } from 'js-tiktoken';
import o200k from 'js-tiktoken/ranks/o200k_base';

/** Fixed overhead of one chat message, as src/tokens.rs `MESSAGE_OVERHEAD`. */
export const MESSAGE_OVERHEAD = 4;

/** Providers whose image formulas the report prices. */
export const PROVIDERS = ['anthropic', 'openai', 'gemini'];

/**
 * The model the benchmarks name for each provider (the `model` option): the
 * model of the core's price table (src/plan/prices.rs), a vision model, so that
 * `optical.enabled: 'auto'` renders snapshots for it as every run before the
 * capability table did, and figures stay comparable across runs. For `qwen` the
 * price table's qwen3-max reads no images: its vision sibling qwen3-vl-plus.
 */
export const BENCH_MODELS = Object.freeze({
  anthropic: 'claude-sonnet-4-5',
  openai: 'gpt-5',
  'openai-patch': 'gpt-4.1-mini',
  gemini: 'gemini-3-pro-preview',
  qwen: 'qwen3-vl-plus',
});

/** `options` with the bench's model for its provider (`openai` unless it names one), unless it names a model. */
export function withBenchModel(options = {}) {
  if (options.model !== undefined) return options;
  return { ...options, model: BENCH_MODELS[options.provider ?? 'openai'] };
}

let sharedEncoder;

/** The js-tiktoken o200k_base encoder (built once: loading the ranks takes seconds). */
export function encoder() {
  sharedEncoder ??= getEncoding('o200k_base');
  return sharedEncoder;
}

/** Pre-tokenizer pieces longer than this are counted in chunks of this size. */
export const MAX_PIECE = 64;

/**
 * An o200k_base counter. Texts are split with o200k's pre-tokenizer regex and
 * each distinct piece is encoded once (BPE never crosses pieces, so the sum is
 * exact). js-tiktoken's BPE is quadratic in the piece length and takes seconds
 * on the 1,000-char runs some tool outputs contain (0.1 s for 256 chars), so a piece longer than
 * `MAX_PIECE` chars is counted in `MAX_PIECE` chunks (`stats.longPieces`; a
 * few tokens off at most per chunk). Every distinct text is counted once.
 */
export function o200kCounter() {
  const enc = encoder();
  const pattern = new RegExp(o200k.pat_str, 'gu');
  const cache = new Map();
  const pieces = new Map();
  const stats = { distinct: 0, chars: 0, ms: 0, longPieces: 0 };
  const piece = (p) => {
    let n = pieces.get(p);
    if (n === undefined) {
      if (p.length <= MAX_PIECE) {
        n = enc.encode(p, 'all').length;
      } else {
        n = 0;
        stats.longPieces++;
        for (let i = 0; i < p.length; ) {
          let end = Math.min(p.length, i + MAX_PIECE);
          const c = p.charCodeAt(end - 1);
          if (end < p.length && c >= 0xd800 && c <= 0xdbff) end--;
          n += enc.encode(p.slice(i, end), 'all').length;
          i = end;
        }
      }
      pieces.set(p, n);
    }
    return n;
  };
  const count = (text) => {
    if (!text) return 0;
    let n = cache.get(text);
    if (n === undefined) {
      const started = performance.now();
      n = 0;
      for (const m of text.matchAll(pattern)) n += piece(m[0]);
      stats.ms += performance.now() - started;
      stats.distinct += 1;
      stats.chars += text.length;
      cache.set(text, n);
    }
    return n;
  };
  count.stats = stats;
  return count;
}

/**
 * Image tokens of a `width`×`height` image for `provider`; the same formula as
 * src/tokens.rs `image_tokens`. `optical` takes `detail`, `mediaResolution`,
 * `patchMultiplier` as in the library options.
 */
export function imageTokens(provider, width, height, optical = {}) {
  const w = Math.max(1, width);
  const h = Math.max(1, height);
  const detail = optical.detail ?? 'high';
  const mediaResolution = optical.mediaResolution ?? '';
  const patchMultiplier = optical.patchMultiplier ?? 1.62;
  switch (provider) {
    case 'anthropic': {
      const scale = Math.min(1568 / Math.max(w, h), Math.sqrt(1_150_000 / (w * h)), 1);
      return Math.ceil((w * scale * (h * scale)) / 750);
    }
    case 'openai': {
      if (detail === 'low') return 85;
      const s1 = Math.min(2048 / Math.max(w, h), 1);
      const w1 = w * s1;
      const h1 = h * s1;
      const s2 = Math.min(768 / Math.min(w1, h1), 1);
      const tiles = Math.ceil((w1 * s2) / 512) * Math.ceil((h1 * s2) / 512);
      return 85 + 170 * tiles;
    }
    case 'openai-patch': {
      const patches = Math.min(Math.ceil(w / 32) * Math.ceil(h / 32), 1536);
      return Math.ceil(patches * patchMultiplier);
    }
    case 'gemini':
      if (mediaResolution === 'low') return 280;
      if (mediaResolution === 'medium') return 560;
      if (mediaResolution === 'high') return 1120;
      if (w <= 384 && h <= 384) return 258;
      return 258 * Math.ceil(w / 768) * Math.ceil(h / 768);
    case 'qwen':
      return Math.ceil(w / 28) * Math.ceil(h / 28);
    default:
      throw new Error(`unknown provider ${provider}`);
  }
}

/** Width and height of a PNG given as a data URL or base64 text, or null. */
export function pngSize(urlOrBase64) {
  const b64 = urlOrBase64.startsWith('data:') ? urlOrBase64.slice(urlOrBase64.indexOf(',') + 1) : urlOrBase64;
  const head = Buffer.from(b64.slice(0, 44), 'base64');
  if (head.length < 24 || head.toString('latin1', 1, 4) !== 'PNG') return null;
  return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
}

/** Bytes of a base64 image (data URL or bare base64): `{ base64, png }` (decoded bytes). */
export function imageBytes(urlOrBase64) {
  const b64 = urlOrBase64.startsWith('data:') ? urlOrBase64.slice(urlOrBase64.indexOf(',') + 1) : urlOrBase64;
  let pad = 0;
  while (pad < 2 && b64[b64.length - 1 - pad] === '=') pad++;
  return { base64: b64.length, png: Math.floor((b64.length * 3) / 4) - pad };
}

/** The text and images of an OpenAI chat message content (string or parts). */
export function contentParts(content) {
  const texts = [];
  const images = [];
  if (typeof content === 'string') {
    texts.push(content);
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (part?.type === 'text' && typeof part.text === 'string') texts.push(part.text);
      else if (part?.type === 'image_url' && part.image_url?.url) {
        const size = pngSize(part.image_url.url);
        images.push({ ...(size ?? { width: 0, height: 0 }), detail: part.image_url.detail, url: part.image_url.url });
      } else if (part != null) texts.push(JSON.stringify(part));
    }
  } else if (content != null) {
    texts.push(JSON.stringify(content));
  }
  return { texts, images };
}

/**
 * Token shape of one OpenAI chat message: `text` tokens (content, tool calls,
 * overhead; provider independent) and its images.
 */
export function messageShape(message, count) {
  const { texts, images } = contentParts(message.content);
  let text = MESSAGE_OVERHEAD;
  for (const t of texts) text += count(t);
  for (const call of message.tool_calls ?? []) {
    text += count(call.function?.name ?? '') + count(call.function?.arguments ?? '') + 3;
  }
  return { text, images: images.map(({ width, height, detail }) => ({ width, height, detail })) };
}

/** Tokens of a message shape for `provider`. */
export function shapeTokens(shape, provider, optical = {}) {
  let n = shape.text;
  for (const img of shape.images) {
    n += imageTokens(provider, img.width, img.height, { ...optical, detail: img.detail ?? optical.detail });
  }
  return n;
}
