// Provider formats: detection, validation with opt-in repair, conversion, and
// the neutral conversation a request parses into.
import {
  formatsConvert as wasmConvert,
  formatsDetect as wasmDetect,
  formatsValidate as wasmValidate,
  requestConversation as wasmConversation,
} from '../wasm/tracelite.js';
import { InputError, OptionError, guarded, describe } from './errors.js';
import { requestText } from './options.js';

const FORMATS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];

function checkFormat(format, what) {
  if (format === undefined || format === null) return undefined;
  if (!FORMATS.includes(format)) {
    throw new InputError(
      `must be one of ${FORMATS.join(', ')}, got ${typeof format === 'string' ? JSON.stringify(format) : describe(format)}`, 'UNKNOWN_FORMAT', what,
    );
  }
  return format;
}

function checkOptions(options) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new OptionError(`must be an object, got ${describe(options)}`, 'INVALID_OPTION', 'options');
  }
  return options;
}

/** The format of a request body: 'openai-chat', 'openai-responses', 'anthropic' or 'gemini'. */
export function detectFormat(request) {
  const text = requestText(request);
  return guarded(() => wasmDetect(text));
}

/**
 * Converts a request body to another format. Returns `{ from, to, request, lossy }`;
 * `lossy` lists every member of the source that the target cannot carry, by JSON path.
 */
export function convert(request, to, options = {}) {
  const text = requestText(request);
  const { from } = checkOptions(options);
  checkFormat(to, 'to');
  checkFormat(from, 'from');
  return JSON.parse(guarded(() => wasmConvert(text, to, from ?? undefined)));
}

/**
 * Checks tool-call pairing and role order. Throws a `TraceLiteError` (code such
 * as `ORPHAN_TOOL_RESULT`, `path` of the offending field) unless `repair` is
 * set, in which case it returns the repaired request and the list of repairs.
 * Image parts are checked too: invalid base64 is `INVALID_REQUEST`, an image over
 * the default `limits.maxImagePixels` (50,000,000) is `LIMIT_EXCEEDED`.
 */
export function validateRequest(request, options = {}) {
  const text = requestText(request);
  const { format, repair = false } = checkOptions(options);
  checkFormat(format, 'format');
  if (typeof repair !== 'boolean') {
    throw new OptionError(`must be a boolean, got ${describe(repair)}`, 'INVALID_OPTION', 'repair');
  }
  return JSON.parse(guarded(() => wasmValidate(text, format ?? undefined, repair)));
}

/**
 * The neutral conversation a request parses into (the core's model, the same
 * for every format): `{ format, system, messages, extra }`; each message has
 * `role`, `parts` (`text`, `image`, `tool_call`, `tool_result`, `other`) and
 * `index`, its position in the request's own list of messages (`messages`,
 * `input` or `contents`), which `report.changes[].message` names.
 */
export function requestConversation(request, options = {}) {
  const text = requestText(request);
  const { format } = checkOptions(options);
  checkFormat(format, 'format');
  return JSON.parse(guarded(() => wasmConversation(text, format ?? undefined)));
}
