// A plain OpenAI SDK tool loop (Chat Completions) with TraceLite: the loop keeps
// the whole history; before each call `compress` shrinks the request (a huge tool
// output becomes an excerpt and a spill:// pointer), and the model's read_spill /
// grep_spill calls are answered from the spill store by `handleToolCall`.
//
//   import OpenAI from 'openai';
//   import { agentLoop } from './openai.mjs';
//   const { text } = await agentLoop(new OpenAI(), {
//     model: 'gpt-4.1', task: 'The tests fail; fix them.', tools: [bashTool], runTool,
//   });
import { SpillStore, compress, handleToolCall, isSpillTool, spillToolDefinitions } from 'tracelite';

/**
 * Runs the loop until the model answers without tool calls. `client` is an
 * `OpenAI` instance (anything with `chat.completions.create`); `tools` are
 * your Chat Completions tool definitions and `runTool(name, args)` runs one.
 */
export async function agentLoop(client, {
  model, task, system, tools = [], runTool, session = 'conversation-1', budget = 128_000,
  store = new SpillStore(), maxTurns = 20, onReport,
}) {
  const messages = [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: task }];
  const allTools = [...tools, ...spillToolDefinitions('openai-chat')];
  for (let turn = 0; turn < maxTurns; turn++) {
    // Compress the whole history every turn: same input, same bytes out (prompt caches keep working).
    const { request, report } = compress({ model, messages, tools: allTools }, { budget, provider: 'openai', session, store });
    onReport?.(report);
    const response = await client.chat.completions.create(request);
    const message = response.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) return { text: message.content, messages };
    for (const call of message.tool_calls) {
      const { name, arguments: args } = call.function;
      const content = isSpillTool(name)
        ? handleToolCall(name, args, { store, session }).text   // an error reply is text the model can act on
        : String(await runTool(name, JSON.parse(args)));
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
  throw new Error(`no answer within ${maxTurns} turns`);
}
