// Test support for the model capability table (issue 48): model ids across the
// providers and router prefixes, and tool outputs the optical stage renders.

/** Ids the table says read images: the three providers, their router prefixes. */
export const VISION_MODELS = [
  'gpt-4o', 'openai/gpt-4o', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-5', 'o4-mini',
  'claude-sonnet-4-5', 'anthropic/claude-sonnet-4.5', 'claude-3-5-sonnet-20241022', 'openrouter/anthropic/claude-opus-4.1',
  'gemini-2.5-pro', 'google/gemini-2.5-flash', 'gemini-3-pro-preview', 'models/gemini-2.0-flash',
];

/** Ids that read no images (text-only, unknown, or none). */
export const TEXT_MODELS = [
  'deepseek-chat', 'deepseek-reasoner', 'deepseek/deepseek-chat-v3.1', 'qwen3-coder-480b', 'Qwen/Qwen3-Coder-480B-A35B-Instruct',
  'qwen3-max', 'llama-3.1-70b', 'meta-llama/Llama-3.3-70B-Instruct', 'glm-4.6', 'z-ai/glm-4.6', 'moonshotai/kimi-k2',
  'gpt-3.5-turbo', 'gpt-4', 'o3-mini', 'openai/gpt-oss-120b', 'claude-2.1', 'gemini-pro', 'my-vlm', 'replay',
];

/** The output of test run `i`: 60 dense lines (what the optical stage renders well). */
export function testLog(i) {
  return Array.from({ length: 60 }, (_, k) => `tests/unit/test_module_${i}_${k}.py::test_case_${k}_${i} PASSED [${String(k).padStart(3)}%]`).join('\n');
}

/** Options under which every output outside a recent window of 1 is handed to the optical stage. */
export const RENDER_ALL = { window: 1, plan: { enabled: false }, optical: { batch: 1 } };

/** An OpenAI Chat request of `n` tool results (`testLog`), for `model` (none when undefined). */
export function chatWithLogs(n = 6, model) {
  const messages = [{ role: 'user', content: 'Make the test suite pass.' }];
  for (let i = 0; i < n; i++) {
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `pytest tests/unit -k part${i}` }) } }] });
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: testLog(i) });
  }
  return model === undefined ? { messages } : { model, messages };
}

/** How many image parts a JSON-able value carries (PNG data, any format). */
export function pngCount(value) {
  return (JSON.stringify(value).match(/iVBORw0KGgo/g) ?? []).length;
}
