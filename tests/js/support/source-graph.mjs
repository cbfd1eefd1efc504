// The JS sources of the repository as TypeScript's parser reads them: every
// relative (or `#entry`-style package) import, re-export and literal dynamic
// `import('...')`, the graph they make and its cycles, and each function's
// length in lines. Used by tests/js/import-graph.test.mjs.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const SOURCE = /\.(m?js)$/;

/** Every .js/.mjs file under `dir` (node_modules and dot folders left out), sorted. */
export function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (SOURCE.test(name)) out.push(path);
  }
  return out;
}

function parse(file, text) {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
}

/** The module specifiers `text` imports, re-exports or loads by a literal `import()`. */
export function specifiersOf(text, file = 'module.js') {
  const out = [];
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))) out.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(parse(file, text));
  return out;
}

/**
 * `{ name, line, lines }` of every function (declaration, expression, arrow,
 * method, accessor) of `text`, its lines counted from its first to its last.
 */
export function functionLengths(text, file = 'module.js') {
  const source = parse(file, text);
  const out = [];
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = lineOf(node.getStart(source));
      const name = node.name?.getText(source) ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : '(anonymous)');
      out.push({ name, line: first, lines: lineOf(node.end) - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * The file a specifier names, or `undefined` when it is not a file of the
 * repository (a package, `node:`, the built wasm). `map(spec, from)` may
 * rewrite a specifier first (package `imports`, a server's mounts).
 */
function target(spec, from, map) {
  const mapped = map(spec, from);
  if (mapped === undefined) return undefined;
  if (!mapped.startsWith('/') && !mapped.startsWith('.')) return undefined;
  const path = mapped.startsWith('/') ? mapped : resolve(dirname(from), mapped);
  return path;
}

/**
 * The import graph of `files`: `Map<file, Set<file>>` (edges to files of the
 * repository only) and `missing`: `[from, spec, path]` of relative specifiers
 * naming no file.
 */
export function importGraph(files, { map = (spec) => spec, optional = () => false } = {}) {
  const graph = new Map();
  const missing = [];
  for (const file of files) {
    const edges = new Set();
    for (const spec of specifiersOf(readFileSync(file, 'utf8'), file)) {
      const path = target(spec, file, map);
      if (path === undefined) continue;
      if (existsSync(path) && statSync(path).isFile()) edges.add(path);
      else if (!optional(path)) missing.push([file, spec, path]);
    }
    graph.set(file, edges);
  }
  return { graph, missing };
}

/** Every cycle of `graph` once (as a list of files, first = last), by depth-first search. */
export function cyclesOf(graph) {
  const cycles = [];
  const seen = new Set();
  const state = new Map(); // file → 'open' | 'done'
  const stack = [];
  const visit = (file) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = [...stack.slice(stack.indexOf(next)), next];
        const key = [...cycle.slice(0, -1)].sort().join('\n');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(cycle);
        }
      } else if (!state.has(next)) {
        visit(next);
      }
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}

/** `files` relative to `root`, with `/` separators, for messages. */
export function shown(root, files) {
  return files.map((f) => relative(root, f).split(sep).join('/'));
}
