/**
 * Migrations of palimpsest session logs written by older versions of the format (docs/migrations.md).
 *
 * Each released version keeps a frozen decoder (`v0.ts`, `v1.ts`, `v2.ts`) and each edge
 * vN → vN+1 is its own streaming module; the catalog composes the chain from a header's
 * version. {@link migrate} turns a stream of old lines into checked v3 events; {@link migrateFile}
 * publishes a new current-version file beside the old one without touching it or overwriting
 * anything. Every refusal is a tagged error naming the line ({@link MigrationError}).
 *
 * The core (`src/`) never imports from here: a reader that wants to open old files takes a
 * migrator from this module.
 *
 * @example Migrating a file
 * ```ts
 * import { migrateFile } from "@palimpsest/session/migrations";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/old.jsonl`, '{"type":"session","version":0,"id":"s","createdAt":0,"isSeeded":false}\n');
 * const summary = Effect.runSync(migrateFile(`${dir}/old.jsonl`, { target: `${dir}/new.jsonl` }));
 * assert.equal(summary.fromVersion, 0);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 *
 * @module
 */
export {
  type Catalog,
  chainFor,
  currentVersion,
  defaultCatalog,
  makeCatalog,
  startChain,
} from "./catalog.ts";
export { catalogMigration } from "./on_read.ts";
export type { EdgeOutput, EdgeResult, EdgeRun, MigrationEdge } from "./edge.ts";
export * from "./errors.ts";
export { FileIoError, TargetExists } from "../src/fs/errors.ts";
export {
  defaultTarget,
  migrateFile,
  type MigrateFileOptions,
  type MigrateFileSummary,
} from "./file.ts";
export { decodeHeader, headerJson, type SessionHeaderJson } from "./header.ts";
export type { Json, JsonObject } from "./json.ts";
export type {
  DataCheck,
  DataIssue,
  LegacyEvent,
  LegacyLineDecoder,
  LegacyReplace,
  LegacySurfaceOp,
  LegacyVocabulary,
} from "./legacy.ts";
export {
  makeMigrator,
  migrate,
  type MigratedEvent,
  type MigratedHeader,
  type MigratedRecord,
  type MigrationOptions,
  type Migrator,
  toJsonLine,
} from "./migrate.ts";
export { decodeV0Event, v0Vocabulary } from "./v0.ts";
export { decodeV1Event, v1Vocabulary } from "./v1.ts";
export { decodeV2Event, v2Vocabulary } from "./v2.ts";
export { v0ToV1 } from "./v0_to_v1.ts";
export { v1ToV2 } from "./v1_to_v2.ts";
export {
  syntheticIdPrefix,
  syntheticSystemId,
  systemPromptPlugin,
  v2ToV3,
} from "./v2_to_v3.ts";
