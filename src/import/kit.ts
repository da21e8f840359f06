/**
 * What an importer is built from, in one place: the builder steps, the
 * report's notes, the turn and message steps, the record loop, the line
 * reader, compaction and rewind, the contract and the errors. Every importer
 * imports its shared pieces from here, so that one reads which pieces an
 * importer uses from one list, and a piece that moves between the modules
 * below moves here only.
 *
 * @module
 * @internal
 */
export {
  append,
  type Builder,
  done,
  importedHeader,
  ok,
  setTime,
  type Step,
  uniqueId,
} from "./builder.ts";
export {
  count,
  keptOpaque,
  notAnObject,
  notCarried,
  skip,
  synthesized,
  unknownType,
} from "./notes.ts";
export {
  closeAnsweredTurn,
  closeStep,
  closeTurn,
  openTurn,
  userTurn,
} from "./turns.ts";
export {
  argumentsText,
  epochOf,
  fileName,
  isRecord,
  str,
  toolCallBlock,
} from "./values.ts";
export {
  assistantMessage,
  closeOpenCalls,
  toolResult,
  userMessage,
} from "./messages.ts";
export {
  type Handled,
  handleRecord,
  lineImporter,
  notThisFormat,
  own,
  type RecordHandler,
  type RecordTable,
  skipping,
} from "./records.ts";
export {
  forEachRecord,
  type RecordReadOptions,
  type RecordReadSummary,
} from "./lines.ts";
export { compactBefore, fromLineOnward } from "./compaction.ts";
export { branchPoint, rewindPlan } from "./rewind.ts";
export type { Converted, Importer } from "./importer.ts";
export {
  type ImportError,
  ImportNotASession,
  ImportVersionUnsupported,
} from "./errors.ts";
export { sessionFormatOf } from "./sniff.ts";
