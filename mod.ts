/**
 * `@palimpsest/session`: the session log of an LLM agent.
 *
 * An append-only event log is the source of truth. The **surface** is the
 * ordered list of event seqs that currently produce the messages sent to a
 * model. History manipulation (compaction, tool-result pruning, system-prompt
 * changes, crash repair) is itself an event that says where it goes on the
 * surface (`surfaceOp`) and which earlier events it stands for
 * (`sourceEventSeqs`). Shadowed events stay in the log, written over but
 * still legible.
 *
 * - {@link decodeEvent} checks one event's local rules, one tagged error per
 *   rule ({@link EventDecodeError}).
 * - {@link applyEvent} and {@link replay} fold events into a {@link Surface},
 *   checking the relational rules ({@link SurfaceError}).
 * - {@link deriveMessages} reads the messages off a surface.
 * - {@link Session} ties a header, the log and its surface together and
 *   assigns seqs and times to drafts.
 * - {@link compact}, {@link pruneToolResult} and {@link setSystemPrompt}
 *   rewrite history by appending; {@link lineage} and {@link shadowedBy}
 *   explain what a node stands for and what took it off the surface.
 * - {@link SessionStore} (with {@link layerJsonlStore}) persists sessions as
 *   JSONL files: durable appends, one writer per session, a torn tail
 *   reported and cut; {@link readSessionFile} streams a log in.
 * - {@link interruptedTurnClosers} and the store's `repair` close a turn a
 *   crash left open; {@link checkTranscript} finds what providers reject.
 * - {@link eventJsonSchema} is the JSON Schema of an event line.
 *
 * Two more entry points: `@palimpsest/session/migrations` reads and converts
 * logs of older format versions, and `@palimpsest/session/cli` is the
 * `palimpsest` command line (`verify`, `derive`, `stats`, `explain`,
 * `migrate`, `import`, `repair`, `schema`), also callable in-process as
 * `runCli`; `@palimpsest/session/import` reads pi, Claude Code and Codex
 * session files as v3 logs.
 *
 * @example Appending, replacing and deriving
 * ```ts
 * import { deriveMessages, Session, SessionSeq } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const text = (text: string) => [{ type: "text" as const, text }];
 * const program = Effect.gen(function* () {
 *   let session = Session.make({ id: "demo", createdAt: 0, isSeeded: false });
 *   session = yield* Session.append(session, {
 *     type: "user/message", surfaceOp: "append",
 *     data: { id: "u0", role: "user", content: text("a long question"), source: { kind: "user" } },
 *   });
 *   session = yield* Session.append(session, {
 *     type: "user/message",
 *     surfaceOp: { op: "replace", startSeq: SessionSeq.make(0), endSeq: SessionSeq.make(0) },
 *     sourceEventSeqs: [SessionSeq.make(0)],
 *     data: { id: "s1", role: "user", content: text("summary"), source: { kind: "plugin", plugin: "compaction" } },
 *   });
 *   return deriveMessages(session.surface);
 * });
 * const messages = Effect.runSync(program);
 * assert.deepEqual(messages.map((m) => m.id), ["s1"]);
 * ```
 *
 * @module
 */
export * from "./src/seq.ts";
export * from "./src/message.ts";
export * from "./src/event.ts";
export * from "./src/errors.ts";
export {
  decodeEvent,
  decodeEventResult,
  type DecodeOptions,
  encodeEvent,
  type EncodeOptions,
  isOpaqueEvent,
  makeVocabulary,
  type Vocabulary,
} from "./src/decode.ts";
export {
  applyEvent,
  applyEventResult,
  emptySurface,
  emptySurfaceAt,
  type EmptySurfaceOptions,
  logEvent,
  replay,
  type ReplayFailure,
  replayResult,
  Surface,
  surfaceEvent,
  surfaceNodes,
} from "./src/surface.ts";
export {
  deriveMessages,
  deriveMessagesWithSources,
  type MessageWithSource,
} from "./src/derive.ts";
export * from "./src/session.ts";
export { eventJsonSchema, type JsonSchemaDocument } from "./src/json_schema.ts";
export {
  CompactionShadowsSystemHead,
  CompactionSplitsToolPair,
  ForkPointOutOfRange,
  SystemPromptNotAtHead,
} from "./src/history_errors.ts";
export {
  compact,
  type CompactableRange,
  type CompactionError,
  type CompactOptions,
  type PrunedToolResult,
  type PruneError,
  type PruneLargeOptions,
  type PruneLargeResult,
  pruneLargeToolResults,
  pruneToolResult,
  type SelectByBudgetOptions,
  selectCompactableRange,
  selectCompactableRangeByBudget,
  type SelectOptions,
  setSystemPrompt,
} from "./src/compaction.ts";
export { fork, type ForkOptions } from "./src/fork.ts";
export {
  diffSurfaces,
  lineage,
  type LineageNode,
  shadowedBy,
  surfaceAt,
  type SurfaceDiff,
  type SurfaceReplacement,
} from "./src/provenance.ts";
export {
  checkTranscript,
  type DuplicateToolCall,
  type DuplicateToolResult,
  type TranscriptViolation,
  type UnansweredToolCall,
  type UnknownToolResult,
} from "./src/transcript.ts";
export {
  interruptedTurnClosers,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
} from "./src/repair.ts";
export * from "./src/jsonl/errors.ts";
export {
  compressSourceSeqs,
  decodeEventLine,
  decodeEventValue,
  decodeHeaderLine,
  decodeSessionHeader,
  encodeEventLine,
  encodeHeaderLine,
  expandSourceSeqs,
  type HeaderLine,
  type LineCodecOptions,
  type StoredSource,
} from "./src/jsonl/codec.ts";
export {
  DEFAULT_MAX_LINE_BYTES,
  fileBytes,
  type LoadedLog,
  type Migration,
  type MigrationInput,
  type MigrationOutput,
  type ReadOptions,
  type ReadReport,
  readSessionBytes,
  readSessionFile,
  readSessionStream,
  type TornTail,
} from "./src/jsonl/reader.ts";
export { decodeSessionId, encodeSessionId } from "./src/jsonl/ids.ts";
export {
  type CreateOptions,
  type JsonlStoreOptions,
  layerJsonlStore,
  makeJsonlStore,
  type OpenError,
  type OpenMode,
  type OpenOptions,
  type RepairResult,
  type SessionHandle,
  type SessionStat,
  SessionStore,
  type WriteError,
} from "./src/jsonl/store.ts";
