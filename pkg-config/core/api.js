// The JS API shared by every host entry (entries/: node.js, browser.js, workerd.js, edge.js, deno.js):
// a barrel only; it re-exports the modules and no module imports it (no import cycle).
export {
  TraceLiteError, InputError, OptionError, LimitError, StoreError, InternalError, ProxyError, HostError,
} from './errors.js';
export * from './compress.js';
export * from './spill.js';
export * from './compact.js';
export { handleToolCallAsync } from './spill-reader.js';
export * from './optical.js';
export * from './calibrate.js';
export * from './formats.js';
export * from './config.js';
export * from './replay.js';
export * from './session.js';
export * from './memory.js';
export * from './redact.js';
export * from './format-report.js';
