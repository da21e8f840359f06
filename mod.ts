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
 *   assigns seqs and times to drafts; {@link Draft} builds the drafts (a
 *   tool result cites its call by construction).
 * - {@link compact}, {@link pruneToolResult} and {@link setSystemPrompt}
 *   rewrite history by appending; {@link lineage} and {@link shadowedBy}
 *   explain what a node stands for and what took it off the surface.
 * - {@link SessionStore} (with {@link layerJsonlStore}) persists sessions as
 *   JSONL files: durable appends, one writer per session, a torn tail
 *   reported and cut.
 * - The store's `repair` closes the turns and compactions a crash left open
 *   ({@link openWork} tells what is open); {@link checkTranscript} finds
 *   what providers reject.
 *
 * More entry points, for other readers:
 *
 * - `@palimpsest/session/migrations` reads and converts logs of older format
 *   versions; its `catalogMigration` is the `migrate` option of the store
 *   and the reader.
 * - `@palimpsest/session/jsonl`: the line codec, the streaming reader
 *   (`readSessionFile`), file names, `repairFile` and the error classes of
 *   reading a log file (`CorruptLine`, `FormatTooNew`, ...), for tools that
 *   work on log files.
 * - `@palimpsest/session/schema`: the whole event vocabulary (the data types
 *   of each event, the envelopes, the type predicates), the raw effect
 *   Schemas, `decodeEvent`, `decodeEventResult`, `encodeEvent`,
 *   `eventJsonSchema` (the JSON Schema of an event line) and one error class
 *   per event and fold rule.
 * - `@palimpsest/session/internal`: for store implementers (`StoreCore`,
 *   `makeSessionStore`) and tools that fold or repair by hand
 *   (`applyEventResult`, `surfaceNodes`, `interruptedTurnClosers`, ...).
 * - `@palimpsest/session/import` reads pi, Claude Code, Codex and opencode
 *   session files as v3 logs.
 * - `@palimpsest/session/view` draws a session as one self-contained HTML
 *   page (the surface, what each replacement shadowed, the size over the
 *   log).
 * - `@palimpsest/session/cli` is the `palimpsest` command line (`verify`,
 *   `derive`, `stats`, `explain`, `migrate`, `import`, `view`, `repair`,
 *   `schema`),
 *   also callable in-process as `runCli`.
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
export { isSessionSeq, seqInput, SessionSeq } from "./src/core/seq.ts";
export type {
  ContentBlock,
  FileBlock,
  ImageBlock,
  Message,
  MessageSource,
  ReasoningBlock,
  Role,
  TextBlock,
  ToolCallBlock,
  ToolResultBlock,
  ToolResultContentBlock,
} from "./src/core/message.ts";
export type {
  AssistantAttemptEvent,
  AssistantMessageEvent,
  AssistantPartialEvent,
  CompactionEndEvent,
  CompactionPruneEvent,
  CompactionStartEvent,
  CompactionSummaryEvent,
  EndSeedEvent,
  ExtensionEvent,
  LogOnlyEvent,
  OpaqueEvent,
  RequestContextEvent,
  RequestHeaderEvent,
  SessionEvent,
  SessionMetadataData,
  SessionMetadataEvent,
  StepEndEvent,
  StepStartEvent,
  StreamRecord,
  SurfaceEvent,
  SurfaceOp,
  SystemMessageEvent,
  ToolCallEvent,
  ToolError,
  ToolResultEvent,
  TurnEndEvent,
  TurnEndReason,
  TurnStartEvent,
  UserMessageEvent,
} from "./src/core/event.ts";
export { isSurfaceEvent } from "./src/core/event.ts";
export type {
  EventDecodeError,
  EventsNotHeld,
  InvalidSessionSeq,
  SurfaceError,
} from "./src/core/errors.ts";
export {
  decodeEvent,
  type DecodeOptions,
  isExtensionEvent,
  makeVocabulary,
  type Vocabulary,
} from "./src/core/decode.ts";
export {
  applyEvent,
  emptySurface,
  type FoldOptions,
  replay,
  type ReplayFailure,
  replayResult,
  Surface,
} from "./src/surface/mod.ts";

export {
  deriveMessages,
  deriveMessagesWithSources,
  type MessageWithSource,
} from "./src/session/derive.ts";
export {
  type AppendError,
  type AssistantMessageDraft,
  type CitingSurfaceDraft,
  type EventDraft,
  type ExtensionDraft,
  type ExtensionType,
  extensionType,
  type HeldReadError,
  type LogOnlyDraft,
  type MakeOptions,
  Session,
  type SessionApi,
  SessionHeader,
} from "./src/session/session.ts";
export {
  type AssistantInput,
  Draft,
  type DraftApi,
  type DraftContent,
  type DraftToolCall,
  type StepEndDraft,
  type StepStartDraft,
  type SystemMessageDraft,
  type SystemOptions,
  type ToolCallDraft,
  type ToolCallInput,
  type ToolResultDraft,
  type ToolResultOptions,
  type TurnEndDraft,
  type TurnStartDraft,
  type UserMessageDraft,
  type UserOptions,
} from "./src/session/drafts.ts";
export {
  CompactionNotFound,
  CompactionShadowsSystemHead,
  CompactionSplitsToolPair,
  ForkPointOutOfRange,
  RewindDropsUnexpectedTurns,
  SystemPromptNotAtHead,
} from "./src/history/errors.ts";
export {
  compact,
  type CompactionError,
  type CompactOptions,
} from "./src/history/compact.ts";
export {
  type CompactableRange,
  type SelectByBudgetOptions,
  selectCompactableRange,
  selectCompactableRangeByBudget,
  type SelectOptions,
} from "./src/history/select.ts";
export {
  type PrunedToolResult,
  type PruneError,
  type PruneLargeOptions,
  type PruneLargeResult,
  pruneLargeToolResults,
  pruneToolResult,
} from "./src/history/prune.ts";
export { setSystemPrompt } from "./src/history/system_prompt.ts";
export {
  setMetadata,
  setTitle,
  tagSession,
  untagSession,
} from "./src/history/metadata.ts";
export {
  applyMetadata,
  EMPTY_METADATA,
  type SessionMetadata,
} from "./src/session/metadata_fold.ts";
export { sessionMetadata } from "./src/session/metadata.ts";
export { fork, type ForkOptions } from "./src/history/fork.ts";
export {
  type Branch,
  branches,
  rewind,
  type RewindError,
  type RewindEventDraft,
  type RewindExpectation,
  type RewindOptions,
} from "./src/history/rewind.ts";
export {
  type CompactionDrop,
  compactions,
  type DropKind,
  droppedBy,
  type DroppedError,
  type DroppedNode,
  type LoggedCompaction,
} from "./src/history/dropped.ts";
export {
  diffSurfaces,
  lineage,
  type LineageNode,
  type ReplacementKind,
  shadowedBy,
  surfaceAt,
  type SurfaceDiff,
  type SurfaceReplacement,
} from "./src/history/provenance.ts";
export {
  checkTranscript,
  type DuplicateToolCall,
  type DuplicateToolResult,
  type TranscriptViolation,
  type UnansweredToolCall,
  type UnknownToolResult,
} from "./src/session/transcript.ts";
export {
  type OpenCompaction,
  type OpenTurn,
  type OpenWork,
  openWork,
  type PartialAnswerPolicy,
} from "./src/session/repair.ts";
export {
  type PartialAnswer,
  partialAnswers,
  type PartialBlock,
} from "./src/session/partial.ts";
export {
  AppendOutcomeUnknown,
  HandleClosed,
  InvalidListQuery,
  InvalidSessionId,
  NotAnAppend,
  ReadOnlyHandle,
  SessionAlreadyExists,
  type SessionIdProblem,
  SessionLocked,
  SessionNotFound,
  StorageError,
  type StoredLogDifference,
  StoredLogDiffers,
  WriterClaimLost,
} from "./src/store/errors.ts";
export {
  type AppendResolution,
  type AppendResult,
  type CreateError,
  type CreateOptions,
  type EventsOptions,
  type FollowError,
  type FollowOptions,
  type FollowUntil,
  type HistoryOperation,
  type HistoryReadError,
  type ListError,
  type OpenError,
  type OpenMode,
  type OpenOptions,
  type OpenReport,
  type RemoveError,
  type RepairOptions,
  type RepairResult,
  type ResolveError,
  type ResolveOptions,
  type SessionHandle,
  type SessionStat,
  SessionStore,
  type UpdateResult,
  type UpdateValue,
  type WriteError,
} from "./src/store/store.ts";
export type {
  CatalogueEntry,
  ListFilter,
  ListOrder,
  ListOrderKey,
  ListPage,
  ListQuery,
} from "./src/store/catalogue.ts";
export {
  type RetainOptions,
  type RetainResult,
  retainSessions,
} from "./src/store/retention.ts";
export {
  layerMemoryStore,
  makeMemoryStore,
  type MemoryStore,
  type MemoryStoreOptions,
} from "./src/store/memory.ts";
export type {
  CheckpointOptions,
  CheckpointPolicy,
} from "./src/store/checkpoints.ts";
export type {
  CheckpointProblem,
  CheckpointRejected,
} from "./src/log/checkpoint.ts";
export {
  type JsonlStoreOptions,
  layerJsonlStore,
  makeJsonlStore,
} from "./src/jsonl/store.ts";
