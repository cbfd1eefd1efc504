// Internal: the settings part of compress options (what goes to the core as
// JSON), without the host objects. Imports nothing of the API so that spill.js
// and options.js both use it without an import cycle.
import { OptionError, describe } from './errors.js';

/** Options that are JS objects, not settings; everything else goes to the core as JSON. */
export const HOST_OPTIONS = ['store', 'countTokens', 'previous'];

/** The settings of `options` (host objects left out), after checking it is an object. */
export function settingsOf(options) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new OptionError(`must be an object, got ${describe(options)}`, 'INVALID_OPTION', 'options');
  }
  const settings = {};
  for (const [k, v] of Object.entries(options)) {
    if (!HOST_OPTIONS.includes(k) && v !== undefined) settings[k] = v;
  }
  return settings;
}
