/**
 * The migration the reader and the store take: an older log, parsed but not
 * decoded, converted in memory through the catalog's chain to current-version
 * events. Plug it into `readSessionFile`/`readSessionBytes` (`migrate`) or a
 * read-only `SessionStore.open` to read a log of any released version; a
 * refusal is a {@link MigrationError} that keeps the old file's line number.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as Schema from "effect/Schema";
import { encodeEvent } from "../src/core/encode.ts";
import { SessionHeader } from "../src/session/session.ts";
import type {
  Migration,
  MigrationInput,
  MigrationOutput,
} from "../src/log/reader.ts";
import type { MigrationError } from "./errors.ts";
import { makeMigrator } from "./migrate.ts";

/** A migrated header decoded as a current-version header. */
const decodeHeader = Schema.decodeUnknownResult(SessionHeader);

/**
 * The reader's migration over the catalog's line-by-line migrator. Parsed
 * line i (0-based, after the header) is file line i + 2, so a refusal names
 * the line of the old file.
 *
 * @param input The old log's version, parsed header and parsed event lines.
 * @returns `Effect<MigrationOutput, MigrationError>`: the current-version
 * header and event values, not yet decoded.
 *
 * @example Reading a version-0 log
 * ```ts
 * import { readSessionBytes } from "@palimpsest/session/jsonl";
 * import { catalogMigration } from "@palimpsest/session/migrations";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const v0 = '{"type":"session","version":0,"id":"s","createdAt":0,"isSeeded":false}\n';
 * const log = Effect.runSync(
 *   readSessionBytes(new TextEncoder().encode(v0), { migrate: catalogMigration }),
 * );
 * assert.equal(log.version, 0);
 * assert.equal(log.session.header.id, "s");
 * ```
 */
export const catalogMigration: Migration<MigrationError> = (
  input: MigrationInput,
): Effect.Effect<MigrationOutput, MigrationError> =>
  Effect.suspend(() => {
    const made = makeMigrator(input.header);
    if (Result.isFailure(made)) return Effect.fail(made.failure);
    const migrator = made.success;
    const events: unknown[] = [];
    for (let i = 0; i < input.lines.length; i++) {
      const out = migrator.push(input.lines[i], i + 2);
      if (Result.isFailure(out)) return Effect.fail(out.failure);
      for (const m of out.success) events.push(encodeEvent(m.event));
    }
    const rest = migrator.end();
    if (Result.isFailure(rest)) return Effect.fail(rest.failure);
    for (const m of rest.success) events.push(encodeEvent(m.event));
    const header = decodeHeader(migrator.header.header);
    // The migrator wrote this header from a checked one: it always decodes.
    if (Result.isFailure(header)) return Effect.die(header.failure);
    return Effect.succeed({ header: header.success, events });
  });
