// The code blocks of the two READMEs (README.md, pkg-config/README.md) and which
// test compiles and runs each: every ```js / ```ts block belongs to exactly one
// suite (tests/js/readme-snippets.test.mjs checks that). A block meant to be
// partial is marked by the line `<!-- snippet: partial -->` right above its fence;
// a README's prelude (the inputs its later examples share, shown in the README) by
// `<!-- snippet: prelude -->`: each later block of that README that uses a name the
// prelude declares is compiled and run with the prelude before it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './hosts.mjs';

/** READMEs whose snippets are tested: the repository's and the npm package's (when present). */
export const READMES = ['README.md', 'pkg-config/README.md'].filter((f) => existsSync(join(root, f)));

/** The marker of a deliberately partial block (the line above its fence). */
export const PARTIAL = '<!-- snippet: partial -->';

/** The marker of a README's prelude block (the line above its fence). */
export const PRELUDE = '<!-- snippet: prelude -->';

/** The top-level names a prelude declares (`const name =`). */
export function preludeNames(code) {
  return [...code.matchAll(/^const (\w+)\s*=/gm)].map((m) => m[1]);
}

/** Whether `code` names `name` as an identifier (not inside a word, a member access or a string such as `'conversation-42'`). */
export function usesName(code, name) {
  return new RegExp(`(?<![\\w$.'"\`-])${name}(?![\\w$'"\`-])`).test(code);
}

/**
 * Every ```js / ```ts block but the preludes: `{ name: 'README.md:LINE', lang: 'js' | 'ts',
 * code, partial, prelude }`; `code` starts with its README's prelude (`prelude: true`)
 * when the block comes after it and uses one of its names.
 */
export function readmeSnippets() {
  const out = [];
  for (const readme of READMES) {
    const text = readFileSync(join(root, readme), 'utf8');
    let prelude;
    for (const m of text.matchAll(/^```(js|ts|javascript|typescript)\n([\s\S]*?)^```$/gm)) {
      const before = text.slice(0, m.index).split('\n');
      const marker = before.at(-2)?.trim();
      if (marker === PRELUDE) {
        prelude = m[2];
        continue;
      }
      const uses = prelude !== undefined && preludeNames(prelude).some((n) => usesName(m[2], n));
      out.push({
        name: `${readme}:${before.length}`,
        lang: m[1].startsWith('t') ? 'ts' : 'js',
        code: uses ? `${prelude}\n${m[2]}` : m[2],
        partial: marker === PARTIAL,
        prelude: uses,
      });
    }
  }
  return out;
}

const imports = (code, spec) => new RegExp(`from ['"]${spec}['"]`).test(code);

/**
 * The suite that compiles and runs a snippet: `ai-sdk`, `langchain` and `openai-agents`
 * (tests/js/types.test.mjs), `sdk-loop` (tests/js/sdk-loop.test.mjs: a provider SDK loop
 * answering the spill tools with handleToolCall), else `readme` (tests/js/readme-snippets.test.mjs).
 */
export function suiteOf(code) {
  if (imports(code, 'tracelite/ai-sdk')) return 'ai-sdk';
  if (imports(code, 'tracelite/langchain')) return 'langchain';
  if (imports(code, 'tracelite/openai-agents')) return 'openai-agents';
  if (/handleToolCall\(/.test(code) && /client\.(beta\.)?(messages|chat\.completions)\.create/.test(code)) return 'sdk-loop';
  return 'readme';
}

/** The blocks (not partial) of one suite. */
export function suiteSnippets(suite) {
  return readmeSnippets().filter((s) => !s.partial && suiteOf(s.code) === suite);
}

/**
 * The Node 22 binary of the dev dependencies (the npm package `node`, installed as
 * `node22`): ai 7 and openai 7 declare Node ≥ 22, so what runs them runs on it.
 */
export const NODE_22 = join(root, 'node_modules/node22/bin/node');
