// Test support for the proxy's spill tools: the request the proxy forwards
// (the core's output plus read_spill / grep_spill when it carries a pointer
// of its session), and a stub model that calls a spill tool first and answers
// after it has seen the tool's result, in each format, as JSON or SSE.
import { spillToolDefinitions } from '../../../pkg/entries/node.js';

/** `request` (compress output) as the proxy forwards it: with the spill tools when it points at its session. */
export function withSpillTools(request, format, session) {
  if (!JSON.stringify(request).includes(`spill://${session}/`)) return request;
  return { ...request, tools: [...(request.tools ?? []), ...spillToolDefinitions(format)] };
}

/** A tool output of `lines` lines with `needle` on line `at` (1-based): spilled under a 16k budget. */
export function bigOutput(needle, lines = 3000, at = 1500) {
  return Array.from({ length: lines }, (_, i) => (i + 1 === at ? needle : `build step ${i + 1}: ok, nothing to report here`)).join('\n');
}

/** A conversation in `format` whose last tool result is `output`. */
export function conversation(format, output, extra = {}) {
  switch (format) {
    case 'openai-chat':
      return {
        model: 'gpt-4o',
        messages: [
          { role: 'system', content: 'You fix builds.' },
          { role: 'user', content: 'Why does the build fail?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"make"}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: output },
        ],
        ...extra,
      };
    case 'anthropic':
      return {
        model: 'claude-test',
        max_tokens: 1024,
        system: 'You fix builds.',
        messages: [
          { role: 'user', content: 'Why does the build fail?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'bash', input: { command: 'make' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: output }] },
        ],
        ...extra,
      };
    default:
      return {
        model: 'gpt-4o',
        instructions: 'You fix builds.',
        input: [
          { role: 'user', content: 'Why does the build fail?' },
          { type: 'function_call', call_id: 'fc1', name: 'bash', arguments: '{"command":"make"}' },
          { type: 'function_call_output', call_id: 'fc1', output },
        ],
        ...extra,
      };
  }
}

export const PATHS = { 'openai-chat': '/v1/chat/completions', 'openai-responses': '/v1/responses', anthropic: '/v1/messages' };

/** The text of the last tool result in a request, if the conversation ends with one. */
export function lastToolResult(format, body) {
  if (format === 'openai-chat') {
    const last = body.messages.at(-1);
    return last.role === 'tool' && last.tool_call_id !== 'c1' ? last.content : undefined;
  }
  if (format === 'anthropic') {
    const block = body.messages.at(-1).content?.[0];
    return block?.type === 'tool_result' && block.tool_use_id !== 'tu1' ? block.content : undefined;
  }
  const last = body.input.at(-1);
  return last.type === 'function_call_output' && last.call_id !== 'fc1' ? last.output : undefined;
}

const sse = (events) => events.map(([name, data]) => `${name ? `event: ${name}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);

/**
 * What the stub model answers, as `{ headers, chunks }`: `calls` (`[{ id, name,
 * args (object) }]`) and an optional lead `text`, or only `text` (the final
 * answer), in `format`, streamed when `stream`.
 */
export function modelTurn(format, { text, calls = [] }, stream) {
  if (format === 'openai-chat') {
    const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }));
    if (!stream) {
      return json({ id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text ?? null, ...(calls.length ? { tool_calls: toolCalls } : {}) }, finish_reason: calls.length ? 'tool_calls' : 'stop' }] });
    }
    const chunk = (delta, finish = null) => ['', { id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] }];
    const events = [chunk({ role: 'assistant', content: '' })];
    if (text) events.push(chunk({ content: text.slice(0, 5) }), chunk({ content: text.slice(5) }));
    toolCalls.forEach((c, index) => {
      const args = c.function.arguments;
      events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }));
      events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, 10) } }] }));
      events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(10) } }] }));
    });
    events.push(chunk({}, calls.length ? 'tool_calls' : 'stop'), ['', '[DONE]']);
    return { headers: { 'content-type': 'text/event-stream' }, chunks: sse(events) };
  }
  if (format === 'anthropic') {
    const content = [
      ...(text ? [{ type: 'text', text }] : []),
      ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args })),
    ];
    const stop = calls.length ? 'tool_use' : 'end_turn';
    if (!stream) return json({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason: stop, usage: { input_tokens: 10, output_tokens: 5 } });
    const events = [['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }]];
    content.forEach((block, index) => {
      if (block.type === 'text') {
        events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
        events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text.slice(0, 5) } }]);
        events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text.slice(5) } }]);
      } else {
        const args = JSON.stringify(block.input);
        events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }]);
        events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(0, 10) } }]);
        events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(10) } }]);
      }
      events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    });
    events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stop }, usage: { output_tokens: 5 } }], ['message_stop', { type: 'message_stop' }]);
    return { headers: { 'content-type': 'text/event-stream' }, chunks: sse(events) };
  }
  const output = [
    ...(text ? [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }] : []),
    ...calls.map((c, i) => ({ type: 'function_call', id: `fc_${i}`, call_id: c.id, name: c.name, arguments: JSON.stringify(c.args), status: 'completed' })),
  ];
  const response = { id: 'resp_1', object: 'response', status: 'completed', output };
  if (!stream) return json(response);
  let seq = 0;
  const ev = (type, data) => [type, { type, sequence_number: seq++, ...data }];
  const events = [ev('response.created', { response: { ...response, status: 'in_progress', output: [] } }), ev('response.in_progress', { response: { ...response, status: 'in_progress', output: [] } })];
  output.forEach((item, output_index) => {
    if (item.type === 'message') {
      events.push(ev('response.output_item.added', { output_index, item: { ...item, content: [] } }));
      events.push(ev('response.output_text.delta', { output_index, item_id: item.id, content_index: 0, delta: text }));
    } else {
      events.push(ev('response.output_item.added', { output_index, item: { ...item, arguments: '' } }));
      events.push(ev('response.function_call_arguments.delta', { output_index, item_id: item.id, delta: item.arguments }));
    }
    events.push(ev('response.output_item.done', { output_index, item }));
  });
  events.push(ev('response.completed', { response }));
  return { headers: { 'content-type': 'text/event-stream' }, chunks: sse(events) };
}

function json(body) {
  return { headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify(body)] };
}

/** Parses an SSE body into `[{ event, data }]` (`data` parsed when JSON). */
export function parseSse(text) {
  return text.split(/\n\n/).filter((e) => e.trim()).map((raw) => {
    const event = /^event: (.*)$/m.exec(raw)?.[1];
    const data = raw.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    let parsed = data;
    try {
      parsed = JSON.parse(data);
    } catch {
      // [DONE]
    }
    return { event, data: parsed };
  });
}

/** The assistant text a client assembles from a response (JSON or SSE) in `format`. */
export function clientText(format, text, stream) {
  if (!stream) {
    const body = JSON.parse(text);
    if (format === 'openai-chat') return body.choices[0].message.content ?? '';
    if (format === 'anthropic') return body.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    return body.output.filter((o) => o.type === 'message').flatMap((o) => o.content).map((c) => c.text).join('');
  }
  let out = '';
  for (const { data } of parseSse(text)) {
    if (format === 'openai-chat') out += data?.choices?.[0]?.delta?.content ?? '';
    else if (format === 'anthropic') out += data?.delta?.type === 'text_delta' ? data.delta.text : '';
    else if (data?.type === 'response.output_text.delta') out += data.delta;
  }
  return out;
}

const FORMAT_OF = Object.fromEntries(Object.entries(PATHS).map(([f, p]) => [p, f]));
/** A spill pointer in a text. */
export const POINTER = /spill:\/\/[\w.-]+\/[\w.-]+/;

/**
 * The stub model. `?mode=read` (default): grep_spill on the first pointer, then
 * the found line; `loop`: grep_spill every turn; `mixed`: grep_spill and the
 * client's bash at once; `attack`: read_spill of `?pointer=`.
 */
export function model(req, text) {
  const url = new URL(req.url, 'http://x');
  const format = FORMAT_OF[url.pathname];
  const body = JSON.parse(text);
  const mode = url.searchParams.get('mode') ?? 'read';
  const result = lastToolResult(format, body);
  if (result !== undefined && mode !== 'loop') {
    return modelTurn(format, { text: `final: ${/NEEDLE: [^\n]*/.exec(result)?.[0] ?? result}` }, body.stream);
  }
  const calls = mode === 'attack'
    ? [{ id: 'call_s1', name: 'read_spill', args: { pointer: url.searchParams.get('pointer') } }]
    : [{ id: 'call_s1', name: 'grep_spill', args: { pointer: POINTER.exec(text)?.[0], pattern: 'NEEDLE', literal: true } }];
  if (mode === 'mixed') calls.push({ id: 'call_b1', name: 'bash', args: { command: 'ls' } });
  return modelTurn(format, { text: body.stream ? 'Let me look.' : undefined, calls }, body.stream);
}
