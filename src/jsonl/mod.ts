/**
 * `@palimpsest/session/jsonl`: the JSONL file format below the store, for
 * tools that work on log files rather than on sessions. The format itself
 * (codec, reader, errors) is `src/log/`, the file helpers `src/fs/`; this
 * folder is the file store, and this entry point gathers what a tool on
 * log files needs.
 *
 * - The line codec: {@link decodeEventLine} / {@link encodeEventLine} for one
 *   event line, {@link decodeHeaderLine} / {@link encodeHeaderLine} for the
 *   header, and the compressed form of `sourceEventSeqs`
 *   ({@link compressSourceSeqs}, {@link expandSourceSeqs}).
 * - The streaming reader: {@link readSessionFile} and
 *   {@link readSessionBytes} read, decode and fold a log, report a torn final
 *   line, and migrate an older log in memory when given a `migrate` hook
 *   (`catalogMigration` from `@palimpsest/session/migrations`).
 * - File names: {@link encodeSessionId} / {@link decodeSessionId}.
 * - {@link repairFile}: close an interrupted turn in a log named by its path.
 * - The errors of reading and storing a log, one class per reason.
 *
 * A harness author persists sessions through `SessionStore` from
 * `@palimpsest/session` and does not need this module.
 *
 * @example Encoding and decoding one line
 * ```ts
 * import { decodeEventLine, encodeEventLine } from "@palimpsest/session/jsonl";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const line = '{"type":"turn/start","seq":0,"time":5,"data":{"turn":0}}';
 * const event = Result.getOrThrow(decodeEventLine(line));
 * assert.equal(encodeEventLine(event), line + "\n");
 * ```
 *
 * @module
 */
export { FORMAT_VERSION } from "../core/event.ts";
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
} from "../log/codec.ts";
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
} from "../log/reader.ts";
export { decodeSessionId, encodeSessionId } from "../store/ids.ts";
export {
  type Bundle,
  BUNDLE_VERSION,
  bundleFile,
  BundleInvalid,
  type BundleManifest,
  readBundle,
  type Unbundled,
  unbundleToFolder,
  writeBundle,
} from "./bundle.ts";
export {
  type RepairDone,
  repairFile,
  type RepairFileError,
} from "./repair_file.ts";
export * from "../log/errors.ts";
export * from "../fs/errors.ts";
