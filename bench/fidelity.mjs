// Fidelity proxies: critical lines, tool calls kept verbatim, recoverability
// of removed text through spill pointers, and OCR of snapshots (tesseract).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAX_ITEM = 200;

/** The last line of every Python traceback and other error lines at column 0. */
export function errorLines(text) {
  const lines = text.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('Traceback (most recent call last)')) continue;
    for (let j = i + 1; j < lines.length; j++) {
      const l = lines[j];
      if (l.trim() === '' || /^\s/.test(l)) continue;
      // The exception line (`Name` or `Name: message`); a harness's truncation
      // markup (`</output_head>`, `N characters elided`) does not end it.
      if (!/^[A-Za-z_][\w.]*(?::|$)/.test(l.trimEnd())) continue;
      out.push(l.trimEnd());
      i = j;
      break;
    }
  }
  for (const l of lines) {
    if (/^(?:[A-Za-z_][\w.]*)?(?:Error|Exception)(?::\s|$)/.test(l) || /^E\s+[\w.]*(?:Error|Exception)\b/.test(l)) {
      out.push(l.trimEnd());
    }
  }
  return out;
}

/** Names of failing tests in pytest and unittest/Django runner output. */
export function failingTests(text) {
  const out = [];
  for (const l of text.split('\n')) {
    let m = /^(?:FAILED|ERROR) (\S+::\S+)/.exec(l) ?? /^(\S+::\S+) (?:FAILED|ERROR)\b/.exec(l);
    if (m) out.push(m[1]);
    m = /^(?:FAIL|ERROR): (\w+ \([\w.]+\))/.exec(l);
    if (m) out.push(m[1]);
  }
  return out;
}

/** Paths of files an action edits (str_replace_editor writes or shell edits). */
export function editedPaths(step) {
  const args = step.args ?? {};
  if (step.tool === 'str_replace_editor') {
    return ['create', 'str_replace', 'insert'].includes(args.command) && typeof args.path === 'string' ? [args.path] : [];
  }
  const cmd = typeof args.command === 'string' ? args.command : '';
  const out = [];
  for (const m of cmd.matchAll(/\bsed\s+-i\S*\s+(?:-e\s+)?(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s+([^\s;&|<>]+)/g)) out.push(m[1]);
  for (const m of cmd.matchAll(/\bcat\s*(?:<<-?\s*['"]?\w+['"]?\s*)?>\s*([^\s;&|<>]+)/g)) out.push(m[1]);
  for (const m of cmd.matchAll(/\btee\s+(?:-a\s+)?([^\s;&|<>]+)/g)) out.push(m[1]);
  for (const m of cmd.matchAll(/open\(\s*['"]([^'"]+)['"]\s*,\s*['"][wa]/g)) out.push(m[1]);
  return out
    .map((p) => p.replace(/^['"]|['"]$/g, ''))
    .filter((p) => /^[\w./-]+$/.test(p) && /[./]/.test(p) && !p.startsWith('/dev/') && !p.startsWith('-'));
}

/**
 * Critical items of a trajectory: `{ step, kind, text }` for error lines and
 * failing tests of each observation and the files each action edits.
 */
export function criticalItems(trajectory) {
  const items = [];
  const seen = new Set();
  trajectory.steps.forEach((step, i) => {
    const add = (kind, text) => {
      const t = text.trim().slice(0, MAX_ITEM);
      const key = `${i}\u0000${t}`;
      if (t.length < 4 || seen.has(key)) return;
      seen.add(key);
      items.push({ step: i, kind, text: t });
    };
    const obs = step.observation ?? '';
    for (const l of errorLines(obs)) add('error', l);
    for (const t of failingTests(obs)) add('test', t);
    for (const p of editedPaths(step)) add('path', p);
  });
  return items;
}

/** All text the model sees in an OpenAI chat request, by message. */
export function visibleTexts(messages) {
  return messages.map((m) => {
    let s = '';
    if (typeof m.content === 'string') s = m.content;
    else if (Array.isArray(m.content)) s = m.content.filter((p) => p?.type === 'text').map((p) => p.text).join('\n');
    for (const c of m.tool_calls ?? []) s += `\n${c.function?.name ?? ''}\n${c.function?.arguments ?? ''}`;
    return s;
  });
}

/**
 * Tool calls of `original` kept verbatim (same id, name, arguments, in order)
 * in `output`; `inText` counts the others whose arguments survive as text.
 */
export function toolCallsKept(original, output) {
  const want = original.flatMap((m) => m.tool_calls ?? []);
  const have = output.flatMap((m) => m.tool_calls ?? []);
  let j = 0;
  let kept = 0;
  let inText = 0;
  let allText = null;
  for (const c of want) {
    let k = j;
    while (k < have.length && !sameCall(c, have[k])) k++;
    if (k < have.length) {
      kept++;
      j = k + 1;
    } else {
      allText ??= visibleTexts(output).join('\n');
      if (allText.includes(c.function?.arguments ?? '\u0000')) inText++;
    }
  }
  return { total: want.length, kept, inText };
}

function sameCall(a, b) {
  return a.id === b.id && a.function?.name === b.function?.name && a.function?.arguments === b.function?.arguments;
}

/** `spill://session/key` pointers in a text (shared with the browser-safe grounding module). */
export { pointersOf as pointersIn } from './grounding.mjs';

/**
 * How much of an observation that a policy changed is readable back: bytes of
 * its lines found in the message as emitted or in a blob its pointers name
 * (`blobs(pointers) → texts`). `full` when the original is a substring of a blob.
 */
export function recoverable(originalText, shownText, blobTexts) {
  const total = Buffer.byteLength(originalText);
  if (blobTexts.some((b) => b.includes(originalText))) return { total, recovered: total, full: true };
  const pool = [shownText, ...blobTexts];
  let recovered = 0;
  for (const line of originalText.split('\n')) {
    const bytes = Buffer.byteLength(line) + 1;
    if (line.trim() === '' || pool.some((p) => p.includes(line))) recovered += bytes;
  }
  recovered = Math.min(recovered, total);
  return { total, recovered, full: recovered >= total };
}

/** Normalizes text for fuzzy OCR matching (tesseract reads `_` as space, confuses `0`/`o`, `1`/`l`, quotes). */
export function ocrNormalize(s) {
  return s
    .toLowerCase()
    .replace(/[\s_]+/g, '')
    .replace(/[0]/g, 'o')
    .replace(/[1|!]/g, 'l')
    .replace(/['"`‘’“”]/g, '');
}

/** Whether `item` is legible in `ocrText`: normalized substring or ≥ 90% of its 4-grams. */
export function legible(item, ocrText) {
  const a = ocrNormalize(item);
  const b = ocrNormalize(ocrText);
  if (a.length === 0) return true;
  if (b.includes(a)) return true;
  if (a.length < 8) return false;
  const grams = new Set();
  for (let i = 0; i + 4 <= b.length; i++) grams.add(b.slice(i, i + 4));
  let hit = 0;
  let n = 0;
  for (let i = 0; i + 4 <= a.length; i++, n++) if (grams.has(a.slice(i, i + 4))) hit++;
  return n > 0 && hit / n >= 0.9;
}

/** OCR of a base64 PNG with tesseract (`--psm 6`), or null when tesseract is missing. */
export function ocr(base64Png) {
  const dir = mkdtempSync(join(tmpdir(), 'tl-ocr-'));
  try {
    const file = join(dir, 'snap.png');
    writeFileSync(file, Buffer.from(base64Png, 'base64'));
    return execFileSync('tesseract', [file, '-', '--psm', '6'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 300_000,
      env: { ...process.env, OMP_THREAD_LIMIT: '1' },
    });
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
