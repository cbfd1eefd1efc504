// The facts each tool call of a trajectory used that the agent learned from
// earlier tool output, and how a request shows each (EVALUATION.md §1: as
// text, in an image, behind a spill pointer, or gone). Pure functions, no
// host imports: the playground (www/worker.js) shows them for the step in
// view and `make bench` (bench/grounding.mjs) totals them over the traces.
// OCR and the spill store come in through arguments.

/** Steps whose call was not executed: no facts are measured at them. */
const NOT_EXECUTED = new Set(['format_error', 'message']);

// Common English words, shell commands, Python keywords and builtins (≥ 4 chars:
// shorter names are not identifiers under the §1 rule). Compared lowercased.
const STOP_ENGLISH = `
about above after again against also always another answer anything around back because been before being
below between both but call called case cases change changed changes check checked checking code could
create created current data does doing done down during each else empty error errors even every example
except exist exists expected fail failed failing fails false file files first find fine first fix fixed
following found from full further give given going good have having here issue just keep know last less
like line lines list look looks make makes many might more most much must name names need needs never
next none note nothing number only other others output over part pass passed path problem really result
results right same seems should show shows simple since some something still such sure take test tested
testing tests text than that their them then there these they thing things think this those through time
true type under until update updated used user uses using value values very want well were what when where
whether which while will with within without work works would write written your
able across actual actually added adding allow allows already although among another anyway appear appears
apply approach area avoid based basic become becomes begin behavior behaviour believe best better beyond
bring build built came cannot care carry cause causes certain clear clearly come comes coming common
complete completely consider contain contains correct correctly cover decide default define defined
defines depend depends describe detail details determine different directly does doesn didn isn wasn
aren hasn haven couldn shouldn wouldn won either enough ensure entire especially everything exact exactly
explain extra fact fairly feel fetch fill final finally follow follows force form forms free general get
gets getting goes gone great group handle handled handles happen happens hard help hence high however
idea important include included includes including indeed instead into itself kind large later least
left level likely little long longer lower main mainly matter mean means meant method methods missing mode
move moved must near nearly necessary needed new normal normally notice often once open order original
otherwise ours ourselves outside overall own particular pass passes perhaps place places please point
points possible possibly prevent previous previously probably proper properly provide provided provides
purpose quite rather reason related remain remains remove removed removes required requires rest return
returned returns run running runs said save says second see seem seen self sense separate set sets
several short shown side similar simply single skip small so specific specified start started starts
state step steps stop store stuff support supported suppose take taken takes tell tells than thanks
therefore thus together top total toward towards tried tries true try trying turn twice unless unlike
upon usage use useful usual usually various via view wait way ways whatever whole why wide wish word
words worked working worth wrong yet
`;
const STOP_SHELL = `
apt awk base64 basename bash cat chmod chown clear cmake curl cut date diff dirname echo egrep env eval
exec exit export false fgrep file find fold grep gunzip gzip head help hostname kill less ln locate ls
make man mkdir more mv nano nl node npm perl pip pip3 popd printf ps pushd pwd python python3 read
readlink realpath rm rmdir sed seq shift sleep sort source stat sudo tail tar tee test time timeout touch
tr true type uname uniq unset unzip vim wc wget which whoami xargs yes zip pytest tox git
apply checkout commit stash status show reset clone fetch pull push branch
`;
const STOP_PYTHON = `
False None True and as assert async await break class continue def del elif else except finally for from
global if import in is lambda nonlocal not or pass raise return try while with yield match case self cls
abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex
delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals hasattr hash help
hex id input int isinstance issubclass iter len list locals map max memoryview min next object oct open ord
pow print property range repr reversed round set setattr slice sorted staticmethod str sum super tuple type
vars zip __init__ __name__ __main__ __file__ __class__ __dict__ __doc__ __all__ __repr__ __str__ __eq__
args kwargs append extend insert remove items keys values update split strip join replace startswith
endswith lower upper encode decode read write readlines close exception exceptions assertEqual assertTrue
assertFalse assertRaises assertIn main test tests unittest os sys re json typing path
`;

/** Lowercased stoplist of identifiers that are never facts. */
export const STOPLIST = new Set(
  `${STOP_ENGLISH} ${STOP_SHELL} ${STOP_PYTHON}`
    .split(/\s+/)
    .filter((w) => w.length >= 4)
    .map((w) => w.toLowerCase()),
);

/** File extensions that make a token without `/` a file name (`name.ext`). */
const FILE_EXTS = new Set(
  ('py pyi pyx pxd pyc c h cc cpp hpp js mjs cjs ts tsx jsx json yaml yml toml ini cfg txt md rst html htm ' +
    'css xml csv tsv sh bash log lock patch diff in sql po mo tex png jpg jpeg svg gif pdf out err rb go rs java ' +
    'ipynb npy npz pkl fits dat tmpl j2 jinja').split(' '),
);

const WORD = /[A-Za-z0-9_]/;
const isWord = (c) => c !== undefined && WORD.test(c);
const isDigit = (c) => c !== undefined && c >= '0' && c <= '9';

// Markers policies insert (TraceLite placeholders and the baselines' notes):
// removed before matching, on both sides, so their counts never match a fact.
const MARKERS = [
  /\[(?:…\s*)?[^\[\]\n]{0,600}?(?:spill:\/\/|duplicate lines? removed|output cleared at the edit|output cleared at step|lines? of output shown as|output too long|full output|hidden|lines omitted|TraceLite|snapshot image omitted|observation rendered as|output truncated|no tool result was recorded)[^\[\]\n]{0,600}\]/g,
  /Old environment output: \(\d+ lines omitted\)/g,
  /<elided_chars>\s*\d+ characters elided\s*<\/elided_chars>/g,
];
const SPILL_URI = /spill:\/\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+/g;

/** Text with policy markers and `spill://` URIs removed (a marker becomes a line break). */
export function stripMarkers(text) {
  let s = text;
  for (const re of MARKERS) s = s.replace(re, '\n');
  return s.replace(SPILL_URI, ' ');
}

/**
 * Whether `fact` occurs in `text` at identifier boundaries. Paths also refuse
 * `.`/`-` before them (`my-query.py` is not `query.py`) and a `.x`/`-x` after;
 * integers refuse a neighbouring decimal part (`3.10` holds no `10`).
 */
export function occurs(text, fact, kind = 'identifier') {
  if (!fact) return false;
  let from = 0;
  for (;;) {
    const i = text.indexOf(fact, from);
    if (i < 0) return false;
    from = i + 1;
    const b = text[i - 1];
    const a = text[i + fact.length];
    const a2 = text[i + fact.length + 1];
    if (kind === 'path') {
      if (isWord(b) || b === '.' || b === '-') continue;
      if (isWord(a)) continue;
      if ((a === '.' || a === '-') && isWord(a2)) continue;
      return true;
    }
    if (isWord(b) || isWord(a)) continue;
    if (kind === 'integer') {
      if (b === '.' && isDigit(text[i - 2])) continue;
      if (a === '.' && isDigit(a2)) continue;
    }
    return true;
  }
}

/** String and number leaves of a tool call's arguments. */
export function argLeaves(args) {
  const out = [];
  const walk = (v) => {
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'number' && Number.isFinite(v)) out.push(String(v));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(args);
  return out;
}

const TOKEN = /[^\s'"`()[\]{}<>,;:=|&*!?$#@\\]+/g;

/** Whether a token is a path: it holds `/`, or is `name.ext` with a known file extension. */
function isPathToken(tok) {
  if (tok.includes('/')) return /[A-Za-z0-9_]/.test(tok);
  const m = /^[A-Za-z0-9_][A-Za-z0-9_.-]*\.([A-Za-z0-9]+)$/.exec(tok);
  return !!m && FILE_EXTS.has(m[1].toLowerCase());
}

/** `/`-suffixes of a path token, longest first (each a candidate fact). */
export function pathSuffixes(tok) {
  const out = [tok];
  for (let i = tok.indexOf('/'); i >= 0; i = tok.indexOf('/', i + 1)) out.push(tok.slice(i + 1));
  return out.filter((s) => s.length >= 3 && /[A-Za-z_]/.test(s) && (s.includes('/') || s.includes('.') || !STOPLIST.has(s.toLowerCase())));
}

/**
 * Candidate facts of one argument leaf: path tokens (each with its suffixes,
 * longest first), identifiers and integers outside the path tokens.
 */
export function candidates(leaf) {
  const paths = [];
  let rest = '';
  let last = 0;
  for (const m of leaf.matchAll(TOKEN)) {
    const tok = m[0].replace(/^[.,]+(?=[A-Za-z_])/, '').replace(/[.,/]+$/, '');
    if (!isPathToken(tok)) continue;
    paths.push({ token: tok, suffixes: pathSuffixes(tok) });
    rest += leaf.slice(last, m.index) + ' ';
    last = m.index + m[0].length;
  }
  rest += leaf.slice(last);
  const identifiers = [];
  for (const m of rest.matchAll(/[A-Za-z_][A-Za-z0-9_]{3,}/g)) {
    if (isWord(rest[m.index - 1])) continue;
    if (!STOPLIST.has(m[0].toLowerCase())) identifiers.push(m[0]);
  }
  const integers = [];
  // Numbers like `730p` (sed ranges) count; versions and decimals do not.
  for (const m of rest.matchAll(/\d+(?:\.\d+)*/g)) {
    const b = rest[m.index - 1];
    if (isWord(b) || b === '.' || m[0].includes('.') || m[0].length < 2) continue;
    integers.push(m[0]);
  }
  return { paths, identifiers, integers };
}

/** Text of a step's arguments, thought and assistant turn (what excludes a fact at later steps). */
function authoredText(step) {
  const raw = typeof step.assistant_raw === 'string' ? step.assistant_raw : step.assistant_raw == null ? '' : JSON.stringify(step.assistant_raw);
  return [...argLeaves(step.args), step.thought ?? '', raw].join('\n');
}

/** Lines of `cat -n` / `nl -ba` output without their line-number prefix. */
export function withoutLineNumbers(text) {
  return text.replace(/^ *\d+\t/gm, '');
}

/**
 * Facts of every executed tool call of a trajectory (EVALUATION.md §1).
 * Returns `[{ step, tool, facts: [{ kind, text, source, sources }], oldStr }]`
 * for each step whose call ran (not `format_error` nor `message` turns):
 * `source` is the latest earlier step whose observation holds the fact,
 * `sources` every such step (newest first); `oldStr` is the multi-line
 * `old_str` of a `str_replace` edit with the latest earlier observation
 * showing it (line numbers of `cat -n` output ignored), or null.
 */
export function extractFacts(trajectory) {
  const steps = trajectory.steps ?? [];
  // Observations the model saw as tool output (a `message` turn's is a user message).
  const obs = steps.map((s) => (s.tool === 'message' ? '' : stripMarkers(s.observation ?? '')));
  const userTexts = [trajectory.system ?? '', trajectory.task ?? '', ...steps.filter((s) => s.tool === 'message').map((s) => s.observation ?? '')];
  const authored = steps.map(authoredText);
  // Memo per (kind, candidate): observation steps holding it; first step whose
  // authored text holds it (−1: system prompt, task or a user message).
  const memo = new Map();
  const lookup = (kind, text) => {
    const key = `${kind}\u0000${text}`;
    let hit = memo.get(key);
    if (!hit) {
      const inObs = [];
      obs.forEach((o, i) => occurs(o, text, kind) && inObs.push(i));
      let excludedFrom = Infinity;
      if (userTexts.some((u) => occurs(u, text, kind))) excludedFrom = -1;
      else {
        const k = authored.findIndex((a) => occurs(a, text, kind));
        if (k >= 0) excludedFrom = k;
      }
      hit = { inObs, excludedFrom };
      memo.set(key, hit);
    }
    return hit;
  };
  const keep = (kind, text, t) => {
    const { inObs, excludedFrom } = lookup(kind, text);
    const sources = inObs.filter((i) => i < t).reverse();
    if (sources.length === 0) return null;
    // Stated by the user or authored at an earlier step: not learned from tool output.
    if (excludedFrom < t) return false;
    return { kind, text, source: sources[0], sources };
  };
  const out = [];
  steps.forEach((step, t) => {
    if (NOT_EXECUTED.has(step.tool)) return;
    const facts = [];
    const seen = new Set();
    const add = (f) => {
      if (!f || seen.has(`${f.kind}\u0000${f.text}`)) return;
      seen.add(`${f.kind}\u0000${f.text}`);
      facts.push(f);
    };
    for (const leaf of argLeaves(step.args)) {
      const c = candidates(leaf);
      for (const p of c.paths) {
        // The longest suffix seen in an earlier observation is the fact.
        for (const s of p.suffixes) {
          const f = keep('path', s, t);
          if (f === null) continue;
          if (f) add(f);
          break;
        }
      }
      for (const id of c.identifiers) add(keep('identifier', id, t) || null);
      for (const n of c.integers) add(keep('integer', n, t) || null);
    }
    out.push({ step: t, tool: step.tool, facts, oldStr: oldStrOf(step, obs.slice(0, t)) });
  });
  return out;
}

/** The multi-line `old_str` of a str_replace edit and the latest earlier observation showing it. */
function oldStrOf(step, earlier) {
  const a = step.args ?? {};
  if (step.tool !== 'str_replace_editor' || a.command !== 'str_replace' || typeof a.old_str !== 'string') return null;
  if (!a.old_str.includes('\n')) return null;
  for (let i = earlier.length - 1; i >= 0; i--) {
    if (earlier[i].includes(a.old_str) || withoutLineNumbers(earlier[i]).includes(a.old_str)) return { text: a.old_str, source: i };
  }
  return null;
}

/** Text parts of a message (content and tool-call names and arguments). */
export function messageTexts(m) {
  const out = [];
  if (typeof m.content === 'string') out.push(m.content);
  else if (Array.isArray(m.content)) for (const p of m.content) if (p?.type === 'text' && typeof p.text === 'string') out.push(p.text);
  for (const c of m.tool_calls ?? []) out.push(`${c.function?.name ?? ''}\n${c.function?.arguments ?? ''}`);
  return out;
}

/** Image URLs of a message (OpenAI chat `image_url` parts). */
export function messageImages(m) {
  if (!Array.isArray(m.content)) return [];
  return m.content.filter((p) => p?.type === 'image_url').map((p) => p.image_url?.url ?? p.image_url).filter((u) => typeof u === 'string');
}

/** `spill://session/key` pointers of a text. */
export function pointersOf(text) {
  return [...text.matchAll(/spill:\/\/([A-Za-z0-9._-]+)\/([A-Za-z0-9._-]+)/g)].map((m) => ({ session: m[1], key: m[2] }));
}

/**
 * What one request shows, prepared once for all its facts: the text with
 * markers and pointers removed, the images following each observation
 * (`imagesByCall`: tool call id → URLs of the next user message of images
 * after the run of tool messages holding it), and the pointers.
 */
export function viewRequest(messages) {
  const raw = [];
  const imagesByCall = new Map();
  let run = [];
  const images = [];
  for (const m of messages) {
    raw.push(...messageTexts(m));
    const urls = messageImages(m);
    images.push(...urls);
    if (m.role === 'tool') {
      run.push(m.tool_call_id);
      continue;
    }
    if (urls.length > 0 && m.role === 'user') for (const id of run) imagesByCall.set(id, urls);
    run = [];
  }
  const joined = raw.join('\n');
  const text = stripMarkers(joined);
  return { text, lineless: null, imagesByCall, images, pointers: pointersOf(joined), messages };
}

const views = new WeakMap();
function asView(request) {
  if (!Array.isArray(request)) return request;
  let v = views.get(request);
  if (!v) views.set(request, (v = viewRequest(request)));
  return v;
}

/** Call id of a step's tool call in the replayed requests (`trajectoryToRequest`). */
export const callId = (step) => `call_${step}`;

/** Images of the request that show the fact's source observations (newest source first). */
export function sourceImages(request, fact) {
  const view = asView(request);
  const out = [];
  for (const s of fact.sources ?? [fact.source]) for (const u of view.imagesByCall.get(callId(s)) ?? []) if (!out.includes(u)) out.push(u);
  return out;
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Characters tesseract confuses; a fact's character matches its class in the OCR text.
const OCR_CLASSES = { 0: '[0oO]', o: '[0oO]', 1: '[1lI|]', l: '[1lI|]', i: '[iIl1|]', _: '[_\\s-]?', '.': '[.,]', '-': '[-—–_]' };

/**
 * Whether tesseract's text of an image shows `fact`: case, `_` (read as a
 * space or dropped), `0`/`o` and `1`/`l`/`I` are folded, and the match must
 * stand at word boundaries (so `540` never matches `5460` nor `546`). A fact
 * the snapshot wrapped at its right edge counts: the OCR lines are also tried
 * joined end to end.
 */
export function ocrShows(ocrText, fact) {
  const pattern = [...fact]
    .map((c) => OCR_CLASSES[c.toLowerCase()] ?? OCR_CLASSES[c] ?? escapeRe(c))
    .join('');
  const re = new RegExp(`(?<![A-Za-z0-9])${pattern}(?![A-Za-z0-9])`, 'i');
  return re.test(ocrText) || re.test(ocrText.replace(/\n/g, ''));
}

/**
 * The class of one fact in one request: TEXT, IMAGE, POINTER or GONE.
 * `request`: the request's messages (or a `viewRequest`). Options:
 * `ocrTexts`: OCR texts of the request's images, or `(urls) => texts` called
 * only when the fact is not in the text, one image at a time, for the images
 * showing its sources (newest first) until one shows it;
 * `blobs`: texts of the blobs the request's pointers reach, or
 * `(pointers) => texts` called only when needed. Without `ocrTexts`, a fact
 * whose source is shown only as an image is `IMAGE_UNREAD` (not OCR'd).
 */
export function classify(request, fact, { ocrTexts, blobs } = {}) {
  const view = asView(request);
  if (occurs(view.text, fact.text, fact.kind)) return 'TEXT';
  const urls = sourceImages(view, fact);
  if (urls.length > 0) {
    if (ocrTexts === undefined) return 'IMAGE_UNREAD';
    // One image at a time (newest source first): OCR stops at the first that shows it.
    const texts = typeof ocrTexts === 'function' ? urls.map((u) => () => ocrTexts([u])[0]) : ocrTexts.map((o) => () => o);
    if (texts.some((read) => {
      const o = read();
      return o != null && ocrShows(o, fact.text);
    })) return 'IMAGE';
  }
  if (view.pointers.length > 0 && blobs !== undefined) {
    const texts = typeof blobs === 'function' ? blobs(view.pointers) : blobs;
    if (texts.some((b) => occurs(stripMarkers(b), fact.text, fact.kind))) return 'POINTER';
  }
  return 'GONE';
}

/** Whether the multi-line `old_str` shows as text in a request (line numbers of `cat -n` ignored). */
export function oldStrVisible(request, oldStr) {
  const view = asView(request);
  if (view.text.includes(oldStr)) return true;
  view.lineless ??= withoutLineNumbers(view.text);
  return view.lineless.includes(oldStr);
}

/** Texts of the user-authored messages of a request (the task and later user turns). */
export function userMessages(messages) {
  return messages.filter((m) => m.role === 'user').map((m) => messageTexts(m).join('\n')).filter((t) => t.length > 0);
}

/** Whether every user-authored message of `original` is word for word in some message of `output`. */
export function taskVerbatim(original, output) {
  const texts = output.flatMap(messageTexts);
  return userMessages(original).every((u) => texts.some((t) => t.includes(u)));
}

/**
 * Which stage hid a fact, from where its newest source observation ended up:
 * `compact` when its tool message is gone from the output; else the last
 * text stage (spill, dedup, phase: pipeline order) whose change touched that
 * message, else `optical` when it is shown as an image (a snapshot tesseract
 * could not read). `changes` is `report.changes`, whose `message` indexes
 * `output` (the emitted request's own `messages`).
 */
export function hiddenBy(output, fact, changes) {
  const id = callId(fact.source);
  const at = output.findIndex((m) => m.role === 'tool' && m.tool_call_id === id);
  if (at < 0) return 'compact';
  const touched = new Set(changes.filter((c) => c.message === at).map((c) => c.stage));
  const textual = ['spill', 'dedup', 'phase'].filter((s) => touched.has(s));
  if (textual.length > 0) return textual.at(-1);
  if (asView(output).imagesByCall.has(id)) return 'optical';
  return 'unattributed';
}
