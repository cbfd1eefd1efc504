// Finds the optical renderer in the package for the "every observation as an
// image" policy. The package's `renderSnapshot(text, options)` returns
// `{ images: [{ width, height, mediaType, data }] }` or null; other shapes
// (one PNG as base64, a data URL or bytes) are accepted so a renamed or
// reshaped export only needs its name added here.
const NAMES = ['renderSnapshot', 'renderObservation', 'render'];

/** `(text, {provider}) => [base64 PNG, ...] | null`, or null when the package has no renderer. */
export function findRenderer(pkg) {
  for (const name of NAMES) {
    if (typeof pkg[name] !== 'function') continue;
    const fn = pkg[name];
    const renderer = (text, { provider = 'openai' } = {}) => toImages(fn(text, { provider }));
    renderer.exportName = name;
    return renderer;
  }
  return null;
}

function toImages(out) {
  if (out == null) return null;
  if (Array.isArray(out?.images)) return out.images.length ? out.images.map((i) => toBase64(i)) : null;
  return [toBase64(out)];
}

function toBase64(out) {
  if (typeof out === 'string') return out.startsWith('data:') ? out.slice(out.indexOf(',') + 1) : out;
  if (out instanceof Uint8Array) return Buffer.from(out).toString('base64');
  if (out && typeof out === 'object') {
    for (const k of ['data', 'base64', 'png', 'image', 'url']) {
      if (out[k] !== undefined) return toBase64(out[k]);
    }
  }
  throw new Error('renderer returned no PNG (expected base64 text, a data URL or bytes)');
}
