// Paging and grep over a spilled text, by lines (1-based line numbers, as the
// agent's read_spill / grep_spill tools count them).

/** Lines `offset`..`offset+limit-1` (0-based offset) of `text`, with the total line count. */
export function pageLines(text, offset = 0, limit = 200) {
  const lines = text.split('\n');
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  const start = Math.max(0, Math.min(offset, Math.max(0, lines.length - 1)));
  const end = Math.min(lines.length, start + Math.max(1, limit));
  return { offset: start, total: lines.length, bytes: new TextEncoder().encode(text).length, lines: lines.slice(start, end) };
}

/**
 * Lines of `text` matching `pattern` (a literal, or a JS regular expression when
 * `regex`): `{ matches: [{ line, text }], truncated }`. Throws on a bad regex.
 */
export function grepLines(text, pattern, { regex = false, ignoreCase = false, maxMatches = 200 } = {}) {
  if (pattern === '') return { matches: [], truncated: false };
  let test;
  if (regex) {
    const re = new RegExp(pattern, ignoreCase ? 'i' : '');
    test = (line) => re.test(line);
  } else if (ignoreCase) {
    const needle = pattern.toLowerCase();
    test = (line) => line.toLowerCase().includes(needle);
  } else {
    test = (line) => line.includes(pattern);
  }
  const matches = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!test(lines[i])) continue;
    if (matches.length >= maxMatches) return { matches, truncated: true };
    matches.push({ line: i + 1, text: lines[i] });
  }
  return { matches, truncated: false };
}
