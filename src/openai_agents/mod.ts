/**
 * `@palimpsest/session/openai-agents`: an OpenAI Agents SDK (`@openai/agents`)
 * `Session` kept in the session store.
 *
 * - {@link makeAgentsSession} builds it on the `SessionStore` in context
 *   (memory, JSONL, PostgreSQL), {@link openAgentsSession} on a store layer
 *   for code that does not run effects. Give it to `run(agent, input,
 *   { session })`.
 * - `addItems` appends the SDK's items as events; `getItems` returns what
 *   the model sees (after compactions, rewinds and the pairing pass);
 *   `popItem` and `clearSession` are checked rewinds that keep every event
 *   in the log; `runCompaction` runs the library's compaction engine.
 * - {@link modelItems} reads any session's surface as the SDK's items.
 *
 * This entry point imports only the SDK's types: nothing of the SDK is
 * loaded by it, and no other entry point imports it.
 *
 * @module
 */
export {
  type AgentsCompaction,
  type AgentsSession,
  type AgentsSessionOptions,
  makeAgentsSession,
  modelItems,
  openAgentsSession,
  type OpenedAgentsSession,
  SESSION_EVENT_TYPE,
} from "./session.ts";
export { NoRewindPoint, UnknownFunctionCall } from "./errors.ts";
export { ITEMS_KEY, MARKER_PLUGIN } from "./items.ts";
