// Internal (createThreadedProxy): the settings module loaded the same way by
// the main thread and by each worker thread.
import { OptionError } from '../../core/errors.js';

/**
 * The settings a module gives: its default export, or what that function
 * returns for `data` (each thread loads them the same way).
 */
export async function settingsOf(href, data) {
  const mod = await import(href);
  const settings = typeof mod.default === 'function' ? await mod.default(data) : mod.default;
  if (settings === null || typeof settings !== 'object') {
    throw new OptionError(`${href} must export default the proxy's settings (an object, or a function returning one)`, 'INVALID_OPTION', 'settingsModule');
  }
  return settings;
}
