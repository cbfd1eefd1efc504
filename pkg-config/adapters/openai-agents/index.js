// OpenAI Agents SDK adapter: a `callModelInputFilter` (run option or run
// config) that compresses what every model call receives, and the
// `read_spill` / `grep_spill` tools as function tools. Import from
// 'tracelite/openai-agents' (needs the `@openai/agents` package).
//
// The filter changes only the model input: the run's items, its history and a
// Session keep every item as it was (the SDK persists the filtered version of
// the turn's new input only, which TraceLite leaves alone), and the next call
// compresses the whole history again.
import '#entry'; // initializes the wasm for this host
import * as agents from '@openai/agents';
import { InputError, describe } from '../../core/errors.js';
import { canonicalJson, conversationCompressor, frameworkSpillTools, modelNameOf, spillToolsOptions } from '../../internal/framework.js';

/** Content-part / output type carrying an SDK part the Responses format has no place for. */
const REF = 'tracelite_agents_ref';
/** Item field: index of the SDK item a Responses item came from. */
const FROM = 'tracelite_agents';

const TEXT_PARTS = new Set(['input_text', 'output_text']);

/** Content parts (or a tool output array) in the Responses wire format, other parts as refs. */
function partsOut(parts, ref) {
  return parts.map((p) => (TEXT_PARTS.has(p?.type) && typeof p.text === 'string' ? { type: p.type, text: p.text } : ref(p)));
}

/** A function tool's output in the wire format: a string, or content parts. */
function outputOut(output, ref) {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return partsOut(output, ref);
  if (output?.type === 'text' && typeof output.text === 'string') return output.text;
  return [ref(output)];
}

/** One SDK item as a Responses input item. */
function itemOut(item, ref) {
  switch (item?.type ?? (item?.role ? 'message' : undefined)) {
    case 'message':
      return { type: 'message', role: item.role, content: typeof item.content === 'string' ? item.content : partsOut(item.content ?? [], ref) };
    case 'function_call':
      return { type: 'function_call', call_id: item.callId, name: item.name, arguments: item.arguments ?? '{}' };
    case 'function_call_result':
      return { type: 'function_call_output', call_id: item.callId, output: outputOut(item.output, ref) };
    default:
      // Reasoning, hosted tool calls, computer/shell calls and results: the core keeps them verbatim.
      return { ...item };
  }
}

/**
 * Converts the Agents SDK model input (`modelData.input`, `modelData.instructions`)
 * into an OpenAI Responses request, the format the core compresses. Returns
 * `{ request, side }`; `side` keeps what `fromResponsesRequest` needs to give back
 * every item the compression left alone as the very object it was.
 */
export function toResponsesRequest(items, instructions) {
  if (!Array.isArray(items)) throw new InputError(`must be an array of agent input items, got ${describe(items)}`, 'INVALID_ARGUMENT', 'input');
  const side = { items, parts: [], rendered: new Map() };
  const ref = (value) => ({ type: REF, ref: side.parts.push(value) - 1 });
  const input = items.map((item, i) => {
    const out = itemOut(item, ref);
    side.rendered.set(i, canonicalJson(out));
    out[FROM] = i;
    return out;
  });
  const request = { input };
  if (typeof instructions === 'string') request.instructions = instructions;
  return { request, side };
}

/** Wire parts back into SDK parts (`role` decides the text part type of fresh ones). */
function partsBack(parts, side, textType) {
  return parts.map((p) => {
    if (p?.type === REF) return side.parts[p.ref];
    if (p?.type === 'input_image' && typeof p.image_url === 'string') return { type: 'input_image', image: p.image_url, ...(p.detail ? { detail: p.detail } : {}) };
    if (TEXT_PARTS.has(p?.type) || p?.type === undefined) return { type: textType ?? p.type, text: p.text };
    return p;
  });
}

function outputBack(output, original, side) {
  if (typeof output !== 'string') {
    const parts = partsBack(output, side);
    // A single non-text output the core left alone (an image or file result).
    return parts.length === 1 && !Array.isArray(original) && parts[0] === original ? original : parts;
  }
  if (typeof original === 'string') return output;
  if (Array.isArray(original)) return [{ type: 'input_text', text: output }];
  return { type: 'text', text: output };
}

function contentBack(content, role, side) {
  const textType = role === 'assistant' ? 'output_text' : 'input_text';
  if (typeof content === 'string') return role === 'assistant' ? [{ type: textType, text: content }] : content;
  return partsBack(content ?? [], side, textType);
}

/** An item the compression changed, as the SDK item it came from with the new content. */
function changed(original, item, side) {
  switch (item.type) {
    case 'function_call_output':
      return { ...original, output: outputBack(item.output, original.output, side) };
    case 'function_call':
      return { ...original, arguments: item.arguments };
    case 'message':
    case undefined: {
      const content = contentBack(item.content, original.role, side);
      return { ...original, content: original.role === 'system' && Array.isArray(content) ? content.map((p) => p.text ?? '').join('') : content };
    }
    default:
      return item;
  }
}

/** An item the compression wrote (a compaction summary, a snapshot), as an SDK item. */
function fresh(item, side) {
  if (item.type === 'function_call_output') {
    const call = side.items.find((i) => i?.type === 'function_call' && i.callId === item.call_id);
    return { type: 'function_call_result', callId: item.call_id, name: call?.name ?? 'unknown', status: 'completed', output: outputBack(item.output, '', side) };
  }
  if (item.type !== undefined && item.type !== 'message') return item;
  const role = item.role === 'developer' || item.role === 'system' ? 'system' : item.role;
  const content = contentBack(item.content, role, side);
  if (role === 'assistant') return { type: 'message', role, status: 'completed', content };
  if (role === 'system') return { type: 'message', role, content: typeof content === 'string' ? content : content.map((p) => p.text ?? '').join('') };
  return { type: 'message', role: 'user', content };
}

/**
 * Converts a (compressed) Responses request made by `toResponsesRequest` back
 * into the Agents SDK model input `{ input, instructions }`. Unchanged items
 * come back as the very objects they were; changed ones are copies with the new
 * content (same call ids, names, statuses, provider data).
 */
export function fromResponsesRequest(request, side) {
  const input = [];
  const items = Array.isArray(request.input) ? request.input : [{ role: 'user', content: String(request.input ?? '') }];
  for (const wire of items) {
    const { [FROM]: from, ...item } = wire;
    const original = from === undefined ? undefined : side.items[from];
    if (original === undefined) input.push(fresh(item, side));
    else if (canonicalJson(item) === side.rendered.get(from)) input.push(original);
    else input.push(changed(original, item, side));
  }
  const out = { input };
  if (typeof request.instructions === 'string') out.instructions = request.instructions;
  return out;
}

/**
 * The model an agent calls: its `model` (a name or a model object), else the
 * SDK's default model (`getDefaultModel()`, `OPENAI_DEFAULT_MODEL`).
 */
export function agentModel(agent) {
  const named = modelNameOf(agent?.model);
  if (named !== undefined) return named;
  return typeof agents.getDefaultModel === 'function' ? agents.getDefaultModel() : undefined;
}

/**
 * A `callModelInputFilter` for `run(agent, input, { callModelInputFilter })` or
 * `new Runner({ callModelInputFilter })` that compresses every model call's
 * input. Options are `compress` options plus `store`, `maxSessions`,
 * `session` (a name or `({ modelData, agent, context }) => name`; by default a
 * hash of the conversation's opening) and `onReport({ session, report })`; `debug: true` writes each turn's report as text
 * (`formatReport`) to `console.error`, `debug: (text) => void` gets it instead (default off).
 * The model is the agent's (`agentModel(agent)`) unless `options.model` names one.
 * `filter.store` is where spills go: pass it to `spillTools`.
 */
export function traceliteInputFilter(options = {}) {
  const compressor = conversationCompressor(options, 'openai-responses');
  const filter = async (args) => {
    const { request, side } = toResponsesRequest(args.modelData.input, args.modelData.instructions);
    const opening = request.instructions === undefined ? request.input : [{ role: 'system', content: request.instructions }, ...request.input];
    const out = await compressor.compress(request, args, opening, agentModel(args.agent));
    return fromResponsesRequest(out.request, side);
  };
  // The filter never mutates an item: the SDK may skip cloning the history for it.
  filter.preserveInputIdentity = true;
  filter.store = compressor.store;
  return filter;
}

/**
 * `read_spill` and `grep_spill` as Agents SDK function tools over `store` (the
 * filter's store), for `new Agent({ tools })`. Definitions, arguments and
 * replies are the core's. With `{ session }`, only that session's spills are readable.
 */
export function spillTools(store, options = {}) {
  return frameworkSpillTools(store, spillToolsOptions(options).session, ({ name, description, parameters, run }) => agents.tool({
    name,
    description,
    parameters,
    strict: false,
    execute: (input) => run(input),
  }));
}
