/**
 * `migrate`: old event lines in, v3 events out, checked against every v3 rule.
 *
 * The header picks the chain from the catalog; every event line goes through the chain's edges
 * and each event that comes out is decoded by the v3 decoder and folded onto a running surface,
 * so the result passes the full v3 rules or the migration stops with a tagged error naming the
 * line. Nothing is held but the edges' own state and the surface. The input values are never
 * changed.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as Stream from "effect/Stream";
import { decodeEventResult } from "../src/core/decode.ts";
import { encodeEvent } from "../src/core/encode.ts";
import type { SessionEvent } from "../src/core/event.ts";
import type { EventDecodeError, SurfaceError } from "../src/core/errors.ts";
import {
  applyEventResult,
  emptySurface,
  emptySurfaceAt,
  type Surface,
} from "../src/surface/mod.ts";
import {
  type Catalog,
  chainFor,
  defaultCatalog,
  startChain,
} from "./catalog.ts";
import type { EdgeOutput, EdgeRun } from "./edge.ts";
import { MigratedEventRejected, type MigrationError } from "./errors.ts";
import { decodeHeader, headerJson } from "./header.ts";
import type { JsonObject } from "./json.ts";

/** Options of the migration functions. */
export interface MigrationOptions {
  /** The catalog whose chain is used (default: v0 → v1 → v2 → v3). */
  readonly catalog?: Catalog;
}

/** The migrated header line. */
export interface MigratedHeader {
  /** The record kind. */
  readonly _tag: "MigratedHeader";
  /** Always 1. */
  readonly line: number;
  /** The version the old file declared. */
  readonly fromVersion: number;
  /** The current-version header, in header key order. */
  readonly header: JsonObject;
}

/** One migrated event with the 1-based line of the old event it came from. */
export interface MigratedEvent {
  /** The record kind. */
  readonly _tag: "MigratedEvent";
  /** The old file's line (inserted events carry the line of the event they were inserted for). */
  readonly line: number;
  /** The v3 event, decoded and folded. */
  readonly event: SessionEvent;
}

/** What `migrate` emits: the header first, then the events. */
export type MigratedRecord = MigratedHeader | MigratedEvent;

/**
 * A migration over one log in progress. `push` and `end` advance its internal state; each call
 * returns the v3 events produced so far by that call.
 */
export interface Migrator {
  /** The migrated header. */
  readonly header: MigratedHeader;
  /** Feed the next parsed event line with its 1-based line number. */
  readonly push: (
    value: unknown,
    line: number,
  ) => Result.Result<ReadonlyArray<MigratedEvent>, MigrationError>;
  /** The input ended: emit what is still pending. */
  readonly end: () => Result.Result<
    ReadonlyArray<MigratedEvent>,
    MigrationError
  >;
  /** The v3 surface of everything emitted so far. */
  readonly surface: () => Surface;
}

/**
 * Start migrating one log: check its header, pick the chain and prepare the v3 checks.
 *
 * @param header The parsed first line of the old file.
 * @param options The catalog to use.
 * @returns The migrator, or `InvalidLegacyHeader`, `FormatTooNew` or `MissingMigrationEdge`.
 *
 * @example Migrating a v2 log line by line
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const migrator = Result.getOrThrow(makeMigrator(
 *   { type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false },
 * ));
 * const a = Result.getOrThrow(migrator.push({ type: "turn/start", seq: 0, time: 1, data: { turn: 0 } }, 2));
 * const b = Result.getOrThrow(migrator.push({ type: "step/start", seq: 1, time: 2, data: { turn: 0, step: 0 } }, 3));
 * assert.deepEqual([...a, ...b].map((m) => m.event.type), ["turn/start", "step/start", "system/message"]);
 * assert.equal(migrator.header.header["version"], 3);
 * ```
 */
export function makeMigrator(
  header: unknown,
  options: MigrationOptions = {},
): Result.Result<Migrator, MigrationError> {
  const catalog = options.catalog ?? defaultCatalog;
  const decoded = decodeHeader(header);
  if (Result.isFailure(decoded)) return Result.fail(decoded.failure);
  const chain = chainFor(catalog, decoded.success.version);
  if (Result.isFailure(chain)) return Result.fail(chain.failure);
  const run: EdgeRun = startChain(chain.success, decoded.success);
  // The migrator checks and derives; it does not serve the log, so its
  // surface keeps only the current nodes' events.
  let surface: Surface = emptySurfaceAt(emptySurface.baseSeq, {
    keepLog: false,
  });

  const check = (
    outputs: ReadonlyArray<EdgeOutput>,
  ): Result.Result<ReadonlyArray<MigratedEvent>, MigrationError> => {
    const events: Array<MigratedEvent> = [];
    for (const { line, event } of outputs) {
      const seq = typeof event["seq"] === "number" ? event["seq"] : -1;
      const rejected = (error: EventDecodeError | SurfaceError) =>
        Result.fail(
          new MigratedEventRejected({ line, seq, tag: error._tag, error }),
        );
      const v3 = decodeEventResult(event);
      if (Result.isFailure(v3)) return rejected(v3.failure);
      // An older log is a stored one: see `FoldOptions.stored`.
      const next = applyEventResult(surface, v3.success, { stored: true });
      if (Result.isFailure(next)) return rejected(next.failure);
      surface = next.success;
      events.push({ _tag: "MigratedEvent", line, event: v3.success });
    }
    return Result.succeed(events);
  };

  return Result.succeed({
    header: {
      _tag: "MigratedHeader",
      line: 1,
      fromVersion: decoded.success.version,
      header: headerJson(decoded.success, catalog.current),
    },
    push: (value, line) => {
      const out = run.push(value, line);
      return Result.isFailure(out)
        ? Result.fail(out.failure)
        : check(out.success);
    },
    end: () => {
      const out = run.end();
      return Result.isFailure(out)
        ? Result.fail(out.failure)
        : check(out.success);
    },
    surface: () => surface,
  });
}

/**
 * Migrate a stream of parsed JSONL lines (the header first, then the events) to the current
 * version. The n-th element is line n. Emits the migrated header, then every v3 event; fails with
 * the first refusal (a tagged {@link MigrationError} naming the line) or the input's own error.
 *
 * @param input The parsed lines of an old log.
 * @param options The catalog to use.
 * @returns The header and the v3 events, each decoded and folded.
 *
 * @example Migrating a v1 log held in memory
 * ```ts
 * import { migrate, toJsonLine } from "@palimpsest/session/migrations";
 * import { Effect, Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * const lines = [
 *   { type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false },
 *   { type: "turn/start", seq: 0, time: 1, data: { turn: 0 } },
 *   { type: "step/start", seq: 1, time: 2, data: { turn: 0, step: 0 } },
 * ];
 * const out = Effect.runSync(Stream.runCollect(migrate(Stream.fromIterable(lines))));
 * assert.deepEqual(out.map(toJsonLine).map((l) => JSON.parse(l).type), [
 *   "session", "turn/start", "step/start", "system/message",
 * ]);
 * ```
 */
export function migrate<E, R>(
  input: Stream.Stream<unknown, E, R>,
  options: MigrationOptions = {},
): Stream.Stream<MigratedRecord, E | MigrationError, R> {
  return Stream.suspend(() => {
    let migrator: Migrator | undefined;
    let line = 0;
    const pushAll = (
      values: ReadonlyArray<unknown>,
    ): Result.Result<ReadonlyArray<MigratedRecord>, MigrationError> => {
      const out: Array<MigratedRecord> = [];
      for (const value of values) {
        line += 1;
        if (migrator === undefined) {
          const made = makeMigrator(value, options);
          if (Result.isFailure(made)) return Result.fail(made.failure);
          migrator = made.success;
          out.push(migrator.header);
          continue;
        }
        const events = migrator.push(value, line);
        if (Result.isFailure(events)) return Result.fail(events.failure);
        for (const e of events.success) out.push(e);
      }
      return Result.succeed(out);
    };
    const end = (): Result.Result<
      ReadonlyArray<MigratedRecord>,
      MigrationError
    > => {
      if (migrator === undefined) {
        return makeMigrator(undefined, options).pipe(Result.map(() => []));
      }
      return migrator.end();
    };
    return input.pipe(
      Stream.mapAccumArrayEffect(
        () => 0,
        (state, values) =>
          Effect.fromResult(
            Result.map(pushAll(values), (out) => [state, out] as const),
          ),
      ),
      Stream.concat(
        Stream.fromIterableEffect(
          Effect.suspend(() => Effect.fromResult(end())),
        ),
      ),
    );
  });
}

/**
 * The JSONL line (without `\n`) of a migrated record: the header in header key order, an event
 * in the canonical envelope order.
 *
 * @param record A record from {@link migrate}.
 * @returns The line's text.
 *
 * @example The header line
 * ```ts
 * import { toJsonLine } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const line = toJsonLine({ _tag: "MigratedHeader", line: 1, fromVersion: 0, header: { type: "session", version: 3 } });
 * assert.equal(line, '{"type":"session","version":3}');
 * ```
 */
export function toJsonLine(record: MigratedRecord): string {
  return JSON.stringify(
    record._tag === "MigratedHeader"
      ? record.header
      : encodeEvent(record.event),
  );
}
