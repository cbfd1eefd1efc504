// What the user loaded: a trajectory (the ../shared/traces schema) or a
// provider request (any format the package parses).

/**
 * Classifies JSON text. Returns `{ kind: 'trajectory' | 'request', text, label, steps }`
 * or throws an Error saying what is wrong.
 */
export function classifyInput(text, label = 'pasted JSON') {
  if (typeof text !== 'string' || text.trim() === '') throw new Error('the input is empty');
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${label} is not JSON: ${err.message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${label} must be a JSON object (a trajectory or a provider request)`);
  }
  if (Array.isArray(value.steps) && typeof value.task === 'string') {
    const name = value.id ? `${value.id}` : label;
    return { kind: 'trajectory', text, label: name, steps: value.steps.length };
  }
  return { kind: 'request', text, label, steps: 1 };
}

/** Reads a File (picked or dropped) as text. */
export function readFile(file) {
  if (file.size > 64 * 1024 * 1024) return Promise.reject(new Error(`${file.name} is over 64 MiB`));
  return file.text();
}
