// A plain Anthropic SDK tool loop (Messages API) with TraceLite: the loop keeps
// the whole history; before each call `compress` shrinks the request (and puts a
// prompt-cache breakpoint after the part that stays byte-identical), and the
// model's read_spill / grep_spill calls are answered by `handleToolCall`.
// Top-level fields TraceLite does not know, such as `context_management`
// (Anthropic's server-side context editing), pass through unchanged.
//
//   import Anthropic from '@anthropic-ai/sdk';
//   import { agentLoop } from './anthropic.mjs';
//   const { text } = await agentLoop(new Anthropic(), {
//     model: 'claude-sonnet-4-5', task: 'The tests fail; fix them.', tools: [bashTool], runTool,
//   });
import { SpillStore, compress, handleToolCall, isSpillTool, spillToolDefinitions } from 'tracelite';

/**
 * Runs the loop until the model stops asking for tools. `client` is an
 * `Anthropic` instance (anything with `messages.create`; pass
 * `client.beta` to send beta fields); `tools` are your Anthropic tool
 * definitions, `runTool(name, input)` runs one, `extra` is merged into every
 * request (e.g. `{ betas: [...], context_management: {...} }`).
 */
export async function agentLoop(client, {
  model, task, system, tools = [], runTool, session = 'conversation-1', budget = 200_000,
  maxTokens = 4096, extra = {}, store = new SpillStore(), maxTurns = 20, onReport,
}) {
  const messages = [{ role: 'user', content: task }];
  const allTools = [...tools, ...spillToolDefinitions('anthropic')];
  for (let turn = 0; turn < maxTurns; turn++) {
    const body = { model, max_tokens: maxTokens, ...(system ? { system } : {}), messages, tools: allTools, ...extra };
    const { request, report } = compress(body, { budget, provider: 'anthropic', session, store });
    onReport?.(report);
    const response = await client.messages.create(request);
    messages.push({ role: 'assistant', content: response.content });
    const calls = response.content.filter((block) => block.type === 'tool_use');
    if (calls.length === 0) {
      return { text: response.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), messages };
    }
    const results = [];
    for (const call of calls) {
      if (isSpillTool(call.name)) {
        const reply = handleToolCall(call.name, call.input, { store, session });
        results.push({ type: 'tool_result', tool_use_id: call.id, content: reply.text, ...(reply.isError ? { is_error: true } : {}) });
      } else {
        results.push({ type: 'tool_result', tool_use_id: call.id, content: String(await runTool(call.name, call.input)) });
      }
    }
    messages.push({ role: 'user', content: results });
  }
  throw new Error(`no answer within ${maxTurns} turns`);
}
