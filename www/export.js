// Export: the compressed request, the JS call with the current options, and the
// equivalent CLI command (its `--json` figures equal the page's).

function shellQuote(s) {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The JS snippet that reproduces the page's compression. */
export function jsCall(kind, options, session) {
  const opts = JSON.stringify(options, null, 2);
  if (kind === 'trajectory') {
    return `import { SpillStore, compress } from 'tracelite';

// One store per agent run keeps spills readable across turns.
const store = new SpillStore();
const options = ${opts};

// Before every model call, compress the whole request (OpenAI Chat here):
const { request: compressed, report, spills } = compress(request, {
  ...options,
  session: ${JSON.stringify(session)},
  store,
  previous, // the previous compressed request, to measure prefix reuse
});
// Or replay a whole trajectory as this page does:
// import { replayTrajectory } from 'tracelite';
// const { result } = replayTrajectory(trajectory, options);`;
  }
  return `import { SpillStore, compress } from 'tracelite';

const store = new SpillStore();
const options = ${opts};
const { request: compressed, report, spills } = compress(request, { ...options, store });`;
}

/** The CLI command for the same run. */
export function cliCall(kind, options, file) {
  const json = JSON.stringify(options);
  const opt = json === '{}' ? '' : ` --options ${shellQuote(json)}`;
  return kind === 'trajectory'
    ? `npx tracelite replay --json ${shellQuote(file)}${opt}`
    : `npx tracelite compress ${shellQuote(file)}${opt} --report`;
}
