// Internal (createProxy): the proxy answers the model's `read_spill` /
// `grep_spill` calls itself. A forwarded request that carries `spill://`
// pointers of its session gets the two tool definitions (in its own format);
// when the model's turn calls only those tools, the proxy runs them against
// the session's spill store, appends the call and its results to the
// conversation and asks again, up to `maxSpillRounds` times, so the client
// only ever sees the final answer. JSON and SSE responses, for openai-chat,
// openai-responses and anthropic.
import { isSpillTool, spillToolDefinitions } from '#entry';
import { runSpillTool } from '../../core/spill-reader.js';

/** The search tool's name (the one whose work is budgeted). */
const GREP_SPILL = 'grep_spill';

/** Default most follow-up requests one client request may cause. */
export const DEFAULT_MAX_SPILL_ROUNDS = 4;
/** Most spill calls answered in one turn; the others get an error reply. */
export const MAX_SPILL_CALLS = 16;
/**
 * Default most bytes of an upstream response the proxy holds to inspect it (a
 * JSON body, or an SSE turn that calls a spill tool); over it, it passes on as it came.
 */
export const DEFAULT_MAX_SPILL_RESPONSE_BYTES = 4 * 1024 * 1024;

const encoder = new TextEncoder();

function toolName(tool, format) {
  return format === 'openai-chat' ? (tool?.function?.name ?? tool?.name) : tool?.name;
}

// ------------------------------------------------------------------ formats
//
// Each format: `fromJson(response)` → `{ calls: [{ id, name, args }], turn }`
// (or undefined when the proxy does not resolve it), `append(body, turn,
// replies)` adds the assistant turn and the tool results to the request,
// `watcher()` accumulates a streamed turn (`add(event)` says when a tool call
// starts: 'spill' or 'client'; `result()` is what `fromJson` gives), and
// `splicer()` renumbers a follow-up stream so that it continues the first.

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Finish / stop reasons of a turn cut short. */
const CUT_SHORT = new Set(['length', 'content_filter', 'max_tokens', 'refusal', 'model_context_window_exceeded']);

const chat = {
  fromJson(response) {
    if (!Array.isArray(response?.choices) || response.choices.length !== 1) return undefined;
    const { message, finish_reason: finish } = response.choices[0] ?? {};
    // Cut short (length, content filter): the call's arguments may be too.
    if (!message || typeof message !== 'object' || CUT_SHORT.has(finish)) return undefined;
    const calls = (message.tool_calls ?? []).map((c) => ({ id: c?.id, name: c?.function?.name, args: c?.function?.arguments ?? '' }));
    return { calls, turn: message };
  },
  append(body, message, replies) {
    const assistant = { role: 'assistant', content: message.content ?? null, tool_calls: message.tool_calls };
    body.messages.push(assistant, ...replies.map((r) => ({ role: 'tool', tool_call_id: r.id, content: r.text })));
  },
  watcher() {
    let content = '';
    const calls = [];
    let finish;
    let unresolvable = false;
    return {
      add({ data }) {
        const json = parseJson(data);
        let signal;
        if (json?.error) {
          unresolvable = true;
          return 'client';
        }
        for (const choice of json?.choices ?? []) {
          if (choice.index !== undefined && choice.index !== 0) {
            unresolvable = true; // n > 1: the proxy answers one turn, not several
            return 'client';
          }
          finish = choice.finish_reason ?? finish;
          const delta = choice.delta ?? {};
          if (typeof delta.content === 'string') content += delta.content;
          for (const d of delta.tool_calls ?? []) {
            const i = d.index ?? calls.length;
            if (!calls[i]) {
              calls[i] = { id: d.id, type: 'function', function: { name: d.function?.name ?? '', arguments: '' } };
              signal = isSpillTool(calls[i].function.name) ? 'spill' : 'client';
            }
            if (d.id) calls[i].id = d.id;
            if (d.function?.arguments) calls[i].function.arguments += d.function.arguments;
          }
        }
        return signal;
      },
      result() {
        if (unresolvable) return undefined;
        return chat.fromJson({ choices: [{ message: { role: 'assistant', content: content || null, tool_calls: calls.filter(Boolean) }, finish_reason: finish }] });
      },
    };
  },
  // Chunks of a follow-up continue the client's message as they are.
  splicer: () => ({ next() {}, render: (event) => event.raw }),
};

const ANTHROPIC_BLOCK_EVENTS = new Set(['content_block_start', 'content_block_delta', 'content_block_stop']);

const anthropic = {
  fromJson(response) {
    if (!Array.isArray(response?.content) || CUT_SHORT.has(response.stop_reason)) return undefined;
    const calls = response.content.filter((b) => b?.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, args: b.input ?? {} }));
    return { calls, turn: response.content };
  },
  append(body, content, replies) {
    body.messages.push(
      { role: 'assistant', content },
      {
        role: 'user',
        content: replies.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.text, ...(r.isError ? { is_error: true } : {}) })),
      },
    );
  },
  watcher() {
    const blocks = [];
    const partial = [];
    let stop;
    let failed = false;
    return {
      add({ data }) {
        const json = parseJson(data);
        const i = json?.index;
        switch (json?.type) {
          case 'error':
            failed = true;
            return 'client';
          case 'message_delta':
            stop = json.delta?.stop_reason ?? stop;
            return undefined;
          case 'content_block_start':
            blocks[i] = structuredClone(json.content_block);
            partial[i] = '';
            if (blocks[i]?.type === 'tool_use') return isSpillTool(blocks[i].name) ? 'spill' : 'client';
            return undefined;
          case 'content_block_delta': {
            const block = blocks[i];
            const d = json.delta ?? {};
            if (!block) return undefined;
            if (d.type === 'text_delta') block.text = (block.text ?? '') + d.text;
            else if (d.type === 'thinking_delta') block.thinking = (block.thinking ?? '') + d.thinking;
            else if (d.type === 'signature_delta') block.signature = d.signature;
            else if (d.type === 'input_json_delta') partial[i] += d.partial_json ?? '';
            else if (d.type === 'citations_delta') (block.citations ??= []).push(d.citation);
            return undefined;
          }
          case 'content_block_stop':
            if (blocks[i] && 'input' in blocks[i] && partial[i]) blocks[i].input = parseJson(partial[i]) ?? {};
            return undefined;
          default:
            return undefined;
        }
      },
      result: () => (failed ? undefined : anthropic.fromJson({ content: blocks.filter(Boolean), stop_reason: stop })),
    };
  },
  // A follow-up continues the message the client has: no second
  // message_start, block indices after those the client got.
  splicer() {
    let sent = 0;
    let offset = 0;
    return {
      next() {
        offset = sent;
      },
      render(event, round) {
        const json = parseJson(event.data);
        if (json?.type === 'content_block_start') sent = Math.max(sent, json.index + offset + 1);
        if (round === 0) return event.raw;
        if (json?.type === 'message_start') return null;
        if (!ANTHROPIC_BLOCK_EVENTS.has(json?.type)) return event.raw;
        return sseEvent(event.event, { ...json, index: json.index + offset });
      },
    };
  },
};

const RESPONSE_FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const RESPONSE_OPENING = new Set(['response.created', 'response.in_progress', 'response.queued']);

const responses = {
  fromJson(response) {
    if (!Array.isArray(response?.output) || (response.status !== undefined && response.status !== 'completed')) return undefined;
    const calls = response.output.filter((o) => o?.type === 'function_call').map((o) => ({ id: o.call_id, name: o.name, args: o.arguments ?? '' }));
    return { calls, turn: response.output };
  },
  append(body, output, replies) {
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);
    body.input = [...input, ...output, ...replies.map((r) => ({ type: 'function_call_output', call_id: r.id, output: r.text }))];
  },
  watcher() {
    let final;
    return {
      add({ data }) {
        const json = parseJson(data);
        if (json?.type === 'response.output_item.added' && json.item?.type === 'function_call') {
          return isSpillTool(json.item.name) ? 'spill' : 'client';
        }
        if (json?.type === 'error') return 'client';
        if (RESPONSE_FINAL.has(json?.type)) final = json.response;
        return undefined;
      },
      result: () => responses.fromJson(final),
    };
  },
  // A follow-up continues the response the client has: no second
  // response.created, output indices and sequence numbers after those the
  // client got, and the final response lists the items it got before.
  splicer() {
    const items = [];
    let offset = 0;
    let seq = -1;
    return {
      next() {
        offset = items.length;
      },
      render(event, round) {
        const json = parseJson(event.data);
        if (json?.type === 'response.output_item.done' && Number.isInteger(json.output_index)) {
          items[json.output_index + offset] = json.item;
        }
        if (round === 0) {
          if (Number.isInteger(json?.sequence_number)) seq = json.sequence_number;
          return event.raw;
        }
        if (!json) return event.raw;
        if (RESPONSE_OPENING.has(json.type)) return null;
        const out = { ...json };
        if (Number.isInteger(out.sequence_number)) out.sequence_number = ++seq;
        if (Number.isInteger(out.output_index)) out.output_index += offset;
        if (RESPONSE_FINAL.has(out.type) && Array.isArray(out.response?.output)) {
          out.response = { ...out.response, output: [...items.slice(0, offset).filter(Boolean), ...out.response.output] };
        }
        return sseEvent(event.event, out);
      },
    };
  },
};

const FORMATS = { 'openai-chat': chat, 'openai-responses': responses, anthropic };

function sseEvent(name, data) {
  return `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

// --------------------------------------------------------------- requests

/**
 * Adds the `read_spill` / `grep_spill` definitions to `body` (a request in
 * `format`, changed in place) when it carries a `spill://<session>/` pointer
 * (`text` is its JSON) and defines no tool of those names. Returns whether it did.
 */
export function addSpillTools(body, format, session, text) {
  if (!FORMATS[format] || !text.includes(`spill://${session}/`)) return false;
  if (body.tools !== undefined && !Array.isArray(body.tools)) return false;
  if ((body.tools ?? []).some((t) => isSpillTool(toolName(t, format)))) return false;
  // An Anthropic prefill (the last message is the assistant's) is continued, not answered.
  if (format === 'anthropic' && body.messages?.at(-1)?.role === 'assistant') return false;
  body.tools = [...(body.tools ?? []), ...spillToolDefinitions(format)];
  return true;
}

/** Whether the model's turn calls only spill tools (and at least one). */
function spillTurn(turn) {
  return turn !== undefined && turn.calls.length > 0 && turn.calls.every((c) => isSpillTool(c.name));
}

/**
 * Runs a turn's spill calls in `session`: `[{ id, text, isError }]`, each
 * text through `mask` (it goes upstream). Searches are paid from `budget`
 * (`{ left }`, the client request's search work across all its rounds): once
 * it is spent, a search gets a `SEARCH_BUDGET_SPENT` reply without running.
 */
async function runCalls(store, session, calls, mask, budget, maxCost) {
  const replies = [];
  for (const [i, call] of calls.entries()) {
    if (i >= MAX_SPILL_CALLS) {
      replies.push({ id: call.id, text: `${call.name}: at most ${MAX_SPILL_CALLS} spill calls are answered per turn`, isError: true });
      continue;
    }
    if (call.name === GREP_SPILL && budget.left <= 0) {
      replies.push({ id: call.id, text: `${call.name}: SEARCH_BUDGET_SPENT: this request's search work (maxSearchWork) is used up; answer from what you have or use read_spill`, isError: true });
      continue;
    }
    // Other requests run between two calls: one search, not a turn's 16, is the longest they wait.
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 0));
    try {
      const reply = await runSpillTool(store, call.name, call.args, session, { maxCost: Math.min(budget.left, maxCost) });
      budget.left -= reply.work ?? 0;
      replies.push({ id: call.id, text: mask(reply.text), isError: Boolean(reply.isError) });
    } catch (err) {
      // A store failure is the model's to know about, not the client's.
      replies.push({ id: call.id, text: `${call.name}: the spill store failed (${err?.code ?? 'ERROR'})`, isError: true });
    }
  }
  return replies;
}

// ---------------------------------------------------------------- bodies

/**
 * Reads up to `max` bytes of a body: `{ bytes, reader }`, `reader` still
 * open (the rest unread) when the body is longer.
 */
async function readUpTo(body, max) {
  const reader = body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { chunks, size, reader: undefined };
    chunks.push(value);
    size += value.byteLength;
    if (size > max) return { chunks, size, reader };
  }
}

function concat(chunks, size) {
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

/** A body of `chunks`, then whatever `reader` still has. */
function resumed(chunks, reader) {
  return new ReadableStream({
    async pull(controller) {
      if (chunks.length) return controller.enqueue(chunks.shift());
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** The SSE events of a body: `{ raw, event, data }` (`raw` the exact text, blank line included). */
async function* sseEvents(body) {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      finished = done;
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (let m = /\r?\n\r?\n/.exec(buffer); m; m = /\r?\n\r?\n/.exec(buffer)) {
        const raw = buffer.slice(0, m.index + m[0].length);
        buffer = buffer.slice(raw.length);
        yield parseEvent(raw);
      }
      if (done) {
        if (buffer) yield parseEvent(buffer);
        return;
      }
    }
  } finally {
    // The client went away: so does the upstream stream.
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function parseEvent(raw) {
  let event;
  const data = [];
  for (const line of raw.split(/\r?\n/)) {
    const m = /^([^:]*)(?::\s?(.*))?$/.exec(line);
    if (!m || m[1] === '') continue;
    if (m[1] === 'event') event = m[2];
    else if (m[1] === 'data') data.push(m[2] ?? '');
  }
  return { raw, event, data: data.join('\n') };
}

// -------------------------------------------------------------- resolving

/**
 * A resolver for one request: `resolve(response)` gives the response for the
 * client. `ctx`: `{ format, store, session, forwarded (the JSON text sent),
 * send(bodyText) → Promise<Response>, maxRounds, maxBytes, maxWork (search
 * work across all rounds), maxCost (of one search), mask(text) → text }`.
 * `resolve` returns `{ response, rounds }`; for SSE the rounds happen while
 * the client reads, so `rounds` is the header value known at once (undefined).
 */
export function spillResolver(ctx) {
  const adapter = FORMATS[ctx.format];
  let body;
  const request = () => (body ??= JSON.parse(ctx.forwarded));
  const budget = { left: ctx.maxWork };

  async function followUp(turn) {
    const replies = await runCalls(ctx.store, ctx.session, turn.calls, ctx.mask ?? ((text) => text), budget, ctx.maxCost ?? Infinity);
    adapter.append(request(), turn.turn, replies);
    return ctx.send(JSON.stringify(request()));
  }

  async function resolveJson(response) {
    for (let round = 0; ; round++) {
      if (response.status !== 200 || !isJson(response) || !response.body) return { response, rounds: round };
      const { chunks, size, reader } = await readUpTo(response.body, ctx.maxBytes);
      const init = { status: response.status, statusText: response.statusText, headers: response.headers };
      if (reader) return { response: new Response(resumed(chunks, reader), init), rounds: round };
      const bytes = concat(chunks, size);
      const turn = adapter.fromJson(parseJson(new TextDecoder().decode(bytes)));
      if (round >= ctx.maxRounds || !spillTurn(turn)) return { response: new Response(bytes, init), rounds: round };
      response = await followUp(turn);
    }
  }

  /** The client's stream: the first response's events, then each follow-up's, spliced. */
  async function* streamed(first) {
    const splicer = adapter.splicer();
    let response = first;
    for (let round = 0; ; round++) {
      const watcher = adapter.watcher();
      // 'watch': events pass as they come; 'hold': a spill call started, events
      // wait for the end of the turn; 'pass': no more watching.
      let mode = 'watch';
      let held = [];
      let heldBytes = 0;
      // Rendered when sent, so that numbering counts only what the client got.
      const emit = function* (events) {
        for (const event of events) {
          const out = splicer.render(event, round);
          if (out !== null) yield out;
        }
      };
      for await (const event of sseEvents(response.body)) {
        const signal = mode === 'pass' ? undefined : watcher.add(event);
        if (mode === 'watch' && signal === 'spill') mode = 'hold';
        if (mode !== 'hold') {
          if (signal === 'client') mode = 'pass';
          yield* emit([event]);
          continue;
        }
        held.push(event);
        heldBytes += event.raw.length;
        if (signal === 'client' || heldBytes > ctx.maxBytes) {
          // The client's own call, or too much to hold: the turn goes to the client.
          mode = 'pass';
          yield* emit(held);
          held = [];
        }
      }
      const turn = mode === 'hold' ? watcher.result() : undefined;
      if (round >= ctx.maxRounds || !spillTurn(turn)) {
        yield* emit(held);
        return;
      }
      const next = await followUp(turn);
      if (next.status !== 200 || !isStream(next) || !next.body) {
        // The follow-up failed: the client gets what the model said last.
        await next.body?.cancel();
        yield* emit(held);
        return;
      }
      splicer.next();
      response = next;
    }
  }

  return {
    async resolve(response) {
      if (response.status === 200 && isStream(response) && response.body) {
        const events = streamed(response);
        const body = new ReadableStream({
          async pull(controller) {
            const { done, value } = await events.next();
            if (done) controller.close();
            else controller.enqueue(encoder.encode(value));
          },
          async cancel() {
            await events.return();
          },
        });
        return { response: new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers }) };
      }
      return resolveJson(response);
    },
  };
}

function isJson(response) {
  return /\bjson\b/i.test(response.headers.get('content-type') ?? '');
}

function isStream(response) {
  return /^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '');
}
