/**
 * `@palimpsest/session/claude-agent`: a Claude Agent SDK
 * (`@anthropic-ai/claude-agent-sdk`) `SessionStore` kept in the session
 * store.
 *
 * - {@link makeClaudeSessionStore} builds it on the `SessionStore` in
 *   context (memory, JSONL, PostgreSQL), {@link openClaudeSessionStore} on a
 *   store layer for code that does not run effects. Give it to the SDK's
 *   `query` as `options.sessionStore`.
 * - Entries are kept losslessly (`load` returns what `append` was given, in
 *   order) and imported as they arrive by the Claude Code importer, so a
 *   mirrored session derives, views and exports like an imported one;
 *   subagent transcripts are subkeys; one writer per session.
 *
 * This entry point imports only the SDK's types: nothing of the SDK is
 * loaded by it, and no other entry point imports it.
 *
 * @module
 */
export {
  type ClaudeSessionStore,
  makeClaudeSessionStore,
  openClaudeSessionStore,
} from "./store.ts";
export { ENTRY_TYPE } from "./mirror.ts";
