/**
 * `@palimpsest/session/internal`: what the root entry point leaves out
 * because a harness author does not need it, for two other readers.
 *
 * - **Store implementers**: a backend implements the members of
 *   {@link StoreCore} and {@link makeSessionStore}
 *   derives the rest of the `SessionStore` service from it, so every
 *   backend keeps the same promises.
 * - **Tools that fold or repair by hand**: {@link replayResult} and
 *   {@link applyEventResult} (the fold as a `Result`, with the surface it
 *   stopped at), {@link emptySurfaceAt}, {@link surfaceNodes},
 *   {@link surfaceEvent}, {@link logEvent}, {@link projectEvent},
 *   {@link messageChars}, {@link replacementKind}, and the closers a crash
 *   repair appends
 *   ({@link interruptedTurnClosers} and the texts it writes).
 *
 * It also names the types the root's values are typed with
 * ({@link SessionApi}, {@link DraftApi}), the two halves of `EventDraft`
 * ({@link CitingSurfaceDraft}, {@link LogOnlyDraft}), the members of the transcript
 * violation union, the field types of two store errors, and the redaction
 * of secrets the command line applies to what it prints
 * ({@link redactAddress}, {@link secretRedactor}), and the tags of the two
 * rule unions as values ({@link EVENT_DECODE_ERROR_TAGS},
 * {@link SURFACE_ERROR_TAGS}). These are as tested as the rest, but may move between
 * minor versions more freely than the root's names.
 *
 * @example Replaying with the surface a failure stopped at
 * ```ts
 * import { emptySurface } from "@palimpsest/session";
 * import { replayResult } from "@palimpsest/session/internal";
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const start = Effect.runSync(decodeEvent({ type: "turn/start", seq: 0, time: 0, data: { turn: 0 } }));
 * const surface = Result.getOrThrow(replayResult([start], emptySurface));
 * assert.equal(surface.nextSeq, 1);
 * ```
 *
 * @module
 */
export { makeSessionStore, type StoreCore } from "./store/core.ts";
export {
  applyEventResult,
  emptySurfaceAt,
  type EmptySurfaceOptions,
  type FoldOptions,
  logEvent,
  type ReplayFailure,
  replayResult,
  surfaceEvent,
  surfaceNodes,
} from "./surface/mod.ts";
export { projectEvent } from "./surface/project.ts";
export { messageChars } from "./history/surface_nodes.ts";
export { type ReplacementKind, replacementKind } from "./history/provenance.ts";
export {
  type CloserOptions,
  COMPACTION_ABANDONED,
  interruptedTurnClosers,
  type LiveWork,
  type OpenCompaction,
  type OpenTurn,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
} from "./repair.ts";
export {
  type DuplicateToolCall,
  type DuplicateToolResult,
  type UnansweredToolCall,
  type UnknownToolResult,
} from "./transcript.ts";
export type {
  CitingSurfaceDraft,
  LogOnlyDraft,
  SessionApi,
} from "./session.ts";
export { redactAddress, secretRedactor } from "./store/redact.ts";
export type {
  CheckpointOptions,
  CheckpointPolicy,
} from "./store/checkpoints.ts";
export type { MemoryStoreOptions } from "./store/memory.ts";
export type { EventsOptions } from "./store/store.ts";
export type {
  CheckpointProblem,
  CheckpointRejected,
} from "./log/checkpoint.ts";
export type { SessionIdProblem, StoredLogDifference } from "./store/errors.ts";
export type { DraftApi } from "./drafts.ts";
export { EVENT_DECODE_ERROR_TAGS, SURFACE_ERROR_TAGS } from "./rule_tags.ts";
