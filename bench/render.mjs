// Finds the optical renderer in the package for the "every observation as an
// image" policy. When the package exports one under any of these names the
// policy turns on by itself; to wire a differently named export, add it here.
const NAMES = ['renderSnapshot', 'renderObservation', 'renderText', 'render'];

/** `(text, {provider}) => base64 PNG`, or null when the package has no renderer. */
export function findRenderer(pkg) {
  for (const name of NAMES) {
    if (typeof pkg[name] !== 'function') continue;
    const fn = pkg[name];
    const renderer = (text, { provider } = {}) => toBase64(fn(text, { provider }));
    renderer.exportName = name;
    return renderer;
  }
  return null;
}

function toBase64(out) {
  if (typeof out === 'string') return out.startsWith('data:') ? out.slice(out.indexOf(',') + 1) : out;
  if (out instanceof Uint8Array) return Buffer.from(out).toString('base64');
  if (out && typeof out === 'object') {
    for (const k of ['base64', 'data', 'png', 'image', 'url']) {
      if (out[k] !== undefined) return toBase64(out[k]);
    }
  }
  throw new Error('renderer returned no PNG (expected base64 text, a data URL or bytes)');
}
