/**
 * The tags of the two rule unions, as values: `EventDecodeError` and
 * `SurfaceError` (docs/format.md). The type checker holds each list to
 * its union, both ways, so a rule added to a union must be added here.
 *
 * @module
 */
import type { EventDecodeError, SurfaceError } from "./errors.ts";

const decodeTags = [
  "InvalidEnvelope",
  "InvalidSessionSeq",
  "UnknownEventType",
  "InvalidEventData",
  "SurfaceOpMissing",
  "InvalidSurfaceOp",
  "SurfaceMetadataOnLogOnlyEvent",
  "SourcesOnAssistantMessage",
  "InvalidSourceList",
  "EmptySourceList",
  "DuplicateSource",
  "SourceNotEarlier",
  "ReplaceEndpointNotEarlier",
  "ToolErrorWithoutIsError",
  "RetiredHeaderSystem",
  "PrependNotSystemMessage",
  "RewindNotUserMessage",
  "RewindPointNotEarlier",
] as const satisfies ReadonlyArray<EventDecodeError["_tag"]>;

/** Every `_tag` of {@link EventDecodeError}, the event-local rules (docs/format.md). */
export const EVENT_DECODE_ERROR_TAGS: ReadonlyArray<EventDecodeError["_tag"]> =
  decodeTags;

const surfaceTags = [
  "NonContiguousSeq",
  "ReplaceStartNotOnSurface",
  "ReplaceEndNotOnSurface",
  "ReplaceRangeInverted",
  "ShadowedNodeNotCited",
  "ToolResultReplaceNotSingle",
  "ToolResultReplaceTargetNotToolResult",
  "ToolResultReplaceChangesMoreThanContent",
  "SystemHeadProtected",
  "SystemHeadExists",
  "ReplaceShadowsUnansweredCall",
  "RewindNotHeld",
  "RewindPointInsideWork",
  "RewindDropsSystemHead",
  "RewindBreaksToolPair",
  "RewindSourcesMismatch",
] as const satisfies ReadonlyArray<SurfaceError["_tag"]>;

/** Every `_tag` of {@link SurfaceError}, the relational rules (docs/format.md). */
export const SURFACE_ERROR_TAGS: ReadonlyArray<SurfaceError["_tag"]> =
  surfaceTags;

// Each list names every member of its union: a missing tag makes one of
// these `never` and the assignment fails to type-check.
const _allDecodeTags: [
  Exclude<EventDecodeError["_tag"], typeof decodeTags[number]>,
] extends [never] ? true : never = true;
const _allSurfaceTags: [
  Exclude<SurfaceError["_tag"], typeof surfaceTags[number]>,
] extends [never] ? true : never = true;
void _allDecodeTags;
void _allSurfaceTags;
