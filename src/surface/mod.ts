/**
 * The surface, in one import for the rest of the library: the value and its
 * readers (`surface.ts`) and the fold (`fold.ts`). The persistent store
 * (`store.ts`) stays behind them.
 *
 * @module
 */
export {
  emptySurface,
  emptySurfaceAt,
  type EmptySurfaceOptions,
  forEachLogEvent,
  forEachMessage,
  forEachNode,
  logEvent,
  logEventsFrom,
  Surface,
  surfaceEvent,
  surfaceNodes,
} from "./surface.ts";
export { messagesOf } from "./messages.ts";
export {
  applyEvent,
  applyEventResult,
  type FoldOptions,
  replay,
  type ReplayFailure,
  replayOwned,
  replayResult,
} from "./fold.ts";
