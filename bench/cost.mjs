// Cache-aware cost model: $ of a policy's sequence of requests for one
// provider, from the dated price table bench/prices.json.
import { readFileSync } from 'node:fs';

/** The price table (bench/prices.json). */
export function loadPrices(path = new URL('./prices.json', import.meta.url)) {
  const table = JSON.parse(readFileSync(path, 'utf8'));
  const byProvider = {};
  for (const row of table.rows) byProvider[row.provider] = row;
  return { ...table, byProvider };
}

/**
 * Prompt cache of one provider over one policy replay. `cache.mode`:
 * * `prefix`: automatic caching of the prefix shared with the previous request
 *   (OpenAI, Gemini implicit caching); no write charge.
 * * `breakpoint`: explicit breakpoints (Anthropic): the agent marks the end of
 *   the system prompt and of every request; a later request reads the longest
 *   earlier-written prefix and writes the rest at the cache-write price.
 * Prefixes are compared per message (a message is reused only if byte-identical).
 */
export class PromptCache {
  constructor(price) {
    this.price = price;
    this.previous = [];
    this.written = new Set();
  }

  /**
   * Prices one request. `ids[i]` identifies message i's exact bytes,
   * `tokens[i]` its tokens; `system` is the number of leading system messages;
   * `breakpoints` are further message counts the request marks for caching
   * (TraceLite's `cache_control` at `report.stableMessages`).
   */
  request(ids, tokens, { system = 0, outputTokens = 0, breakpoints = [] } = {}) {
    const p = this.price;
    const total = tokens.reduce((s, x) => s + x, 0);
    const min = p.cache.minTokens ?? 0;
    let prefix = 0;
    if (p.cache.mode === 'breakpoint') {
      let sig = '';
      const sigs = [''];
      for (const id of ids) sigs.push((sig += `${id},`));
      for (let k = ids.length; k > 0; k--) {
        if (this.written.has(sigs[k])) {
          prefix = k;
          break;
        }
      }
      if (total >= min) {
        this.written.add(sigs[ids.length]);
        let upTo = 0;
        let k = 0;
        for (const at of [system, ...breakpoints].filter((b) => b > 0 && b < ids.length).sort((a, b) => a - b)) {
          for (; k < at; k++) upTo += tokens[k];
          if (upTo >= min) this.written.add(sigs[at]);
        }
      }
    } else {
      while (prefix < ids.length && prefix < this.previous.length && ids[prefix] === this.previous[prefix]) prefix++;
    }
    this.previous = ids;
    let cached = 0;
    for (let i = 0; i < prefix; i++) cached += tokens[i];
    if (cached < min) cached = 0;
    const g = p.cache.granularity ?? 1;
    cached = Math.floor(cached / g) * g;
    const tier = p.longContext && total > p.longContext.aboveTokens ? { ...p, ...p.longContext } : p;
    const fresh = total - cached;
    const writes = p.cache.mode === 'breakpoint' && total >= min ? fresh : 0;
    const uncached = fresh - writes;
    const input = (cached * tier.cachedInput + writes * (tier.cacheWrite ?? tier.input) + uncached * tier.input) / 1e6;
    const output = (outputTokens * tier.output) / 1e6;
    return { total, cached, writes, input, output };
  }
}
