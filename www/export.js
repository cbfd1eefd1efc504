// Export: the compressed request, the JS call with the current options, and the
// equivalent CLI command (its `--json` figures equal the page's).

function shellQuote(s) {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The JS module (Node ≥ 20, after `npm install tracelite`) that reproduces the
 * page's run: it imports the npm package by name, reads `file` (the loaded
 * input) and prints the same figures; for a trajectory it also shows the call
 * an agent loop makes before every model call.
 */
export function jsCall(kind, options, session, file = kind === 'trajectory' ? 'trajectory.json' : 'request.json') {
  const opts = JSON.stringify(options, null, 2);
  const head = `// npm install tracelite — save as tracelite-run.mjs, run with node (≥ 20)
import { readFileSync } from 'node:fs';
`;
  if (kind === 'trajectory') {
    return `${head}import { SpillStore, compress, replayTrajectory } from 'tracelite';

const options = ${opts};

// Replay the trajectory as this page does (the same figures):
const trajectory = JSON.parse(readFileSync(${JSON.stringify(file)}, 'utf8'));
const { result } = replayTrajectory(trajectory, options);
console.log(\`\${result.baseline_tokens} → \${result.compressed_tokens} tokens, \${(result.reduction * 100).toFixed(1)}% less\`);

// In an agent loop: compress the whole request (OpenAI Chat here) before every
// model call; one store per agent run keeps the spills readable across turns.
const store = new SpillStore();
let previous; // the previous compressed request, to measure prefix reuse
export function compressTurn(request) {
  const out = compress(request, { ...options, session: ${JSON.stringify(session)}, store, previous });
  previous = out.request;
  return out; // { request, report, spills }
}
`;
  }
  return `${head}import { SpillStore, compress } from 'tracelite';

const options = ${opts};

const store = new SpillStore();
const request = JSON.parse(readFileSync(${JSON.stringify(file)}, 'utf8'));
const { request: compressed, report } = compress(request, { ...options, store });
console.log(\`\${report.tokensBefore} → \${report.tokensAfter} tokens\`);
`;
}

/** The CLI command for the same run. */
export function cliCall(kind, options, file) {
  const json = JSON.stringify(options);
  const opt = json === '{}' ? '' : ` --options ${shellQuote(json)}`;
  return kind === 'trajectory'
    ? `npx tracelite replay --json ${shellQuote(file)}${opt}`
    : `npx tracelite compress ${shellQuote(file)}${opt} --report`;
}
