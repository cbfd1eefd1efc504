// The stateful API: `new TraceLite(options)` keeps an agent's raw history, a
// spill store and the render/state caches inside wasm, and assembles the
// compressed request on demand with the same pure core as `compress`.
import { TraceLiteController } from '../wasm/tracelite.js';
import { InputError, OptionError, guarded, jsonArg, describe } from './errors.js';

/** The formats `assemble` writes. */
const FORMATS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Accepts `{ id?, name, arguments }`, an OpenAI tool call
 * `{ id, type: 'function', function: { name, arguments } }` or an AI SDK tool
 * call `{ toolCallId, toolName, input }`; arguments may be JSON text or a value.
 */
function normalizeCall(call) {
  if (!isObject(call)) throw new InputError(`must be an object, got ${describe(call)}`, 'INVALID_TOOL_CALL', 'toolCall');
  const fn = isObject(call.function) ? call.function : undefined;
  const id = call.id ?? call.toolCallId ?? '';
  const name = fn?.name ?? call.name ?? call.toolName;
  const args = fn ? fn.arguments : (call.arguments ?? call.args ?? call.input);
  if (typeof id !== 'string') throw new InputError(`must be a string, got ${describe(id)}`, 'INVALID_TOOL_CALL', 'toolCall.id');
  if (typeof name !== 'string' || name === '') {
    throw new InputError(`must be a non-empty string, got ${name === '' ? 'an empty string' : describe(name)}`, 'INVALID_TOOL_CALL', 'toolCall.name');
  }
  const text = typeof args === 'string' ? args : jsonArg(args ?? {}, 'toolCall.arguments');
  return { id, name, arguments: text };
}

/** A step's output as text: a string as is, an object or array as JSON, none as ''. */
function outputText(output) {
  if (typeof output === 'string') return output;
  if (output === undefined || output === null) return '';
  if (typeof output !== 'object') {
    throw new InputError(`must be a string, an object or an array (sent as JSON), got ${describe(output)}`, 'INVALID_ARGUMENT', 'output');
  }
  return jsonArg(output, 'output');
}

/**
 * An in-process context controller. Feed it the agent's steps with
 * `processStep(toolCall, output)` and other turns with `addMessage(message)`;
 * `assemble(format)` returns the request to send now. Call `free()` (or use
 * `using`) when the agent is done.
 */
export class TraceLite {
  #controller;
  #format;

  constructor(options = {}) {
    if (options === null || options === undefined) options = {};
    if (!isObject(options)) throw new OptionError(`must be an object, got ${describe(options)}`, 'INVALID_OPTION', 'options');
    const { countTokens, ...settings } = options;
    if (countTokens !== undefined && typeof countTokens !== 'function') {
      throw new OptionError(`must be a function (text) => number, got ${describe(countTokens)}`, 'INVALID_OPTION', 'countTokens');
    }
    this.#format = settings.format ?? 'openai-chat';
    this.#controller = guarded(() => new TraceLiteController(jsonArg(settings, 'options'), countTokens));
  }

  get #wasm() {
    if (!this.#controller) throw new OptionError('this TraceLite was freed', 'INVALID_OPTION', 'session');
    return this.#controller;
  }

  /** Records one step (tool call + its output). Returns `{ step, callId, outputTokens, edit? }`. */
  processStep(toolCall, output) {
    const call = jsonArg(normalizeCall(toolCall), 'toolCall');
    const text = outputText(output);
    return JSON.parse(guarded(() => this.#wasm.processStep(call, text)));
  }

  /** Appends a system, user or assistant turn (an OpenAI Chat message: `{ role, content }`). */
  addMessage(message) {
    if (!isObject(message)) throw new InputError(`must be an object { role, content }, got ${describe(message)}`, 'INVALID_REQUEST', 'message');
    const text = jsonArg(message, 'message');
    guarded(() => this.#wasm.addMessage(text));
  }

  /**
   * The request to send now, in `format` (default: `options.format` or
   * `openai-chat`). `base` holds the request's other members (`model`, `tools`, …).
   */
  assemble(format = this.#format, base = {}) {
    if (!FORMATS.includes(format)) {
      throw new InputError(`must be one of ${FORMATS.join(', ')}, got ${typeof format === 'string' ? JSON.stringify(format) : describe(format)}`, 'UNKNOWN_FORMAT', 'format');
    }
    if (!isObject(base)) throw new InputError(`must be an object, got ${describe(base)}`, 'INVALID_REQUEST', 'base');
    const json = guarded(() => this.#wasm.assemble(format, jsonArg(base, 'base')));
    const out = JSON.parse(json);
    this.lastSpills = out.spills;
    this.lastImages = out.images;
    return out.request;
  }

  /** Ends a task stage: the next `assemble` compacts (a stage boundary). */
  finishStage() {
    this.#wasm.finishStage();
  }

  /** Pins a constraint compaction keeps word for word; returns whether it was new. */
  pinConstraint(text) {
    if (typeof text !== 'string') throw new OptionError(`must be a string, got ${describe(text)}`, 'INVALID_OPTION', 'text');
    return guarded(() => this.#wasm.pinConstraint(text));
  }

  /** Constraints pinned so far. */
  pinnedConstraints() {
    return JSON.parse(guarded(() => this.#wasm.pinnedConstraints()));
  }

  /** What the last `assemble` did (per stage, every change), or `null`. */
  report() {
    return JSON.parse(guarded(() => this.#wasm.report()));
  }

  /** Counters: steps, tokens raw/sent, savings per stage, edits, spill use, prefix reuse. */
  telemetry() {
    return JSON.parse(guarded(() => this.#wasm.telemetry()));
  }

  /** The full text behind a `spill://<session>/<key>` pointer from a marker or tombstone. */
  readSpill(pointer) {
    if (typeof pointer !== 'string') throw new InputError(`must be a string, got ${describe(pointer)}`, 'INVALID_SPILL_KEY', 'pointer');
    return guarded(() => this.#wasm.readSpill(pointer));
  }

  /** Blobs this session has kept: `[{ key, bytes, lines }]`. */
  listSpills() {
    return JSON.parse(guarded(() => this.#wasm.listSpills()));
  }

  /** Releases the wasm memory. */
  free() {
    this.#controller?.free();
    this.#controller = null;
  }

  [Symbol.dispose]() {
    this.free();
  }
}
