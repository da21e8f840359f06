/**
 * `@palimpsest/session/internal`: for two readers a harness author is not.
 *
 * - **Store implementers**: a backend implements {@link StoreCore} and
 *   {@link makeSessionStore} derives the rest of the `SessionStore` service
 *   from it, so every backend keeps the same promises.
 * - **Tools that fold or repair by hand**: {@link applyEventResult} (one
 *   step of the fold as a `Result`), {@link emptySurfaceAt},
 *   {@link surfaceNodes}, {@link surfaceEvent}, {@link logEvent},
 *   {@link projectEvent}, {@link messageChars}, {@link replacementKind}, and
 *   the closers a crash repair appends ({@link interruptedTurnClosers} and
 *   the texts it writes).
 *
 * It also holds the redaction of secrets that the command line applies to
 * what it prints ({@link redactAddress}, {@link secretRedactor}). These are
 * as tested as the rest, but may move between minor versions more freely
 * than the names of the other entry points.
 *
 * @example Folding one event with the surface a failure leaves unchanged
 * ```ts
 * import { emptySurface } from "@palimpsest/session";
 * import { applyEventResult } from "@palimpsest/session/internal";
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const start = Effect.runSync(decodeEvent({ type: "turn/start", seq: 0, time: 0, data: { turn: 0 } }));
 * const surface = Result.getOrThrow(applyEventResult(emptySurface, start));
 * assert.equal(surface.nextSeq, 1);
 * assert.ok(Result.isFailure(applyEventResult(surface, start)));
 * ```
 *
 * @module
 */
export { makeSessionStore, type StoreCore } from "./store/core.ts";
export {
  applyCatalogueChange,
  type CatalogueChange,
  catalogueChange,
  entryOfSession,
  queryEntries,
  type ResolvedQuery,
} from "./store/catalogue.ts";
export {
  applyEventResult,
  emptySurfaceAt,
  type EmptySurfaceOptions,
  logEvent,
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
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
} from "./session/repair.ts";
export { redactAddress, secretRedactor } from "./store/redact.ts";
