// Test support for the proxy's spill tools: the request the proxy forwards
// (the core's output plus read_spill / grep_spill when it carries a pointer
// of its session), and a stub model that calls a spill tool first and answers
// after it has seen the tool's result, in each format, as JSON or SSE.
import { spillToolDefinitions } from '../../../pkg/node.js';

/** `request` (compress output) as the proxy forwards it: with the spill tools when it points at its session. */
export function withSpillTools(request, format, session) {
  if (!JSON.stringify(request).includes(`spill://${session}/`)) return request;
  return { ...request, tools: [...(request.tools ?? []), ...spillToolDefinitions(format)] };
}
