// Adversarial request bodies shared by the proxy tests (issue 16, item 2).

/** `n` one-word messages after a system prompt: the many-message compaction attack. */
export function manyMessages(n) {
  const messages = [{ role: 'system', content: 'You are terse.' }];
  for (let i = 0; i < n; i++) messages.push({ role: i % 2 ? 'assistant' : 'user', content: `word${i}` });
  return { model: 'gpt-4o', messages };
}

/**
 * `n` tool calls whose distinct outputs of about `bytes` bytes each go to the
 * spill store (when over the spill cap): a request that writes about `n` blobs.
 * Compaction writes one more, whatever it compacts.
 */
export function manySpills(n, bytes) {
  const messages = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'List the logs.' }];
  const lines = Math.max(1, Math.round(bytes / 40));
  for (let i = 0; i < n; i++) {
    const id = `call_${i}`;
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `cat log${i}.txt` }) } }] });
    const out = Array.from({ length: lines }, (_, k) => `log ${i} line ${k}: value ${(i * 7919 + k * 104729) % 1000003}`).join('\n');
    messages.push({ role: 'tool', tool_call_id: id, content: out });
  }
  messages.push({ role: 'user', content: 'Go on.' });
  return { model: 'gpt-4o', messages };
}

/**
 * An agent conversation of `turns` tool calls, each reading a different
 * 70-line source file: dense text whose older outputs the optical stage
 * renders at the defaults (a request that costs renders when nothing is cached).
 */
export function renderingConversation(turns) {
  const messages = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'Fix the failing parser tests in src/parse.py.' }];
  for (let i = 0; i < turns; i++) {
    const id = `call_${i}`;
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `cat src/module_${i}.py` }) } }] });
    const lines = Array.from({ length: 70 }, (_, l) => `def handler_${i}_${l}(request, response, timeout=${(l * 7) % 60}):  # line ${l} of module ${i}: return response.status_code == ${200 + (l % 5)}`);
    messages.push({ role: 'tool', tool_call_id: id, content: lines.join('\n') });
  }
  return { model: 'gpt-4o', messages };
}

/**
 * A body of about `bytes` (JSON text, a little under) made of tiny tool calls,
 * unique to `session`: per byte, the request that needs the most memory (issue 39).
 */
export function maximalBody(bytes, session) {
  const messages = [{ role: 'user', content: `go ${session}` }];
  let size = 200;
  for (let i = 0; size < bytes - 300; i++) {
    const id = `c${i}`;
    const turn = [
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `ls /d${i}` }) } }] },
      { role: 'tool', tool_call_id: id, content: `f_${session}_${i}.txt\nother_${i % 97}.log` },
    ];
    size += JSON.stringify(turn).length;
    messages.push(...turn);
  }
  return JSON.stringify({ model: 'gpt-4o', messages });
}
