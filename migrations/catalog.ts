/**
 * The catalog of migration edges, and the chain it composes for a log's version.
 *
 * A catalog is built from a list of edges and the current version; building fails when two
 * edges leave one version or when the chain from the oldest version to the current one has a
 * gap, so a missing edge is found when the library loads, not when an old file is opened. Given a
 * header's version it picks the chain: none for the current version, `FormatTooNew` for a newer
 * one. Running a chain feeds every event line through the edges in order; it holds no more than
 * the edges themselves hold.
 *
 * @module
 */
import * as Result from "effect/Result";
import { FORMAT_VERSION } from "../src/core/event.ts";
import type { EdgeOutput, EdgeResult, EdgeRun, MigrationEdge } from "./edge.ts";
import {
  DuplicateMigrationEdge,
  FormatTooNew,
  InvalidLegacyEnvelope,
  MissingMigrationEdge,
} from "./errors.ts";
import { isJsonObject } from "./json.ts";
import type { SessionHeaderJson } from "./header.ts";
import { v0ToV1 } from "./v0_to_v1.ts";
import { v1ToV2 } from "./v1_to_v2.ts";
import { v2ToV3 } from "./v2_to_v3.ts";

/**
 * The format version this library reads natively and writes.
 *
 * @example Every chain ends here
 * ```ts
 * import { currentVersion, defaultCatalog } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * assert.equal(defaultCatalog.current, currentVersion);
 * ```
 */
export const currentVersion: number = FORMAT_VERSION;

/** A checked set of edges: one from every version in `oldest..current - 1` to the next. */
export interface Catalog {
  /** The oldest version the catalog migrates from. */
  readonly oldest: number;
  /** The version every chain ends at. */
  readonly current: number;
  /** The edges by their `from` version. */
  readonly edges: ReadonlyMap<number, MigrationEdge>;
}

/**
 * Build a catalog, refusing a gap or a duplicate in the chain.
 *
 * @param edges The edges, in any order.
 * @param options `current` (default {@link currentVersion}) and `oldest` (default 0).
 * @returns The catalog, `MissingMigrationEdge` for the first version no edge leaves (or an edge
 * that skips a version), `DuplicateMigrationEdge` for a version two edges leave.
 *
 * @example A gap fails when the catalog is built
 * ```ts
 * import { makeCatalog, v0ToV1, v2ToV3 } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const catalog = makeCatalog([v0ToV1, v2ToV3]);
 * assert.equal(Result.isFailure(catalog) && catalog.failure._tag, "MissingMigrationEdge");
 * ```
 */
export function makeCatalog(
  edges: ReadonlyArray<MigrationEdge>,
  options: { readonly current?: number; readonly oldest?: number } = {},
): Result.Result<Catalog, MissingMigrationEdge | DuplicateMigrationEdge> {
  const current = options.current ?? currentVersion;
  const oldest = options.oldest ?? 0;
  const byFrom = new Map<number, MigrationEdge>();
  for (const edge of edges) {
    if (byFrom.has(edge.from)) {
      return Result.fail(new DuplicateMigrationEdge({ from: edge.from }));
    }
    byFrom.set(edge.from, edge);
  }
  for (let version = oldest; version < current; version++) {
    const edge = byFrom.get(version);
    if (edge === undefined || edge.to !== version + 1) {
      return Result.fail(
        new MissingMigrationEdge({ from: version, to: current }),
      );
    }
  }
  return Result.succeed({ oldest, current, edges: byFrom });
}

/**
 * The default catalog: v0 → v1 → v2 → v3.
 *
 * @example Its span
 * ```ts
 * import { defaultCatalog } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual([defaultCatalog.oldest, defaultCatalog.current], [0, 3]);
 * ```
 */
export const defaultCatalog: Catalog = Result.getOrThrow(
  makeCatalog([v0ToV1, v1ToV2, v2ToV3]),
);

/**
 * The edges that take a log of `version` to the catalog's current version, in order.
 *
 * @param catalog The catalog.
 * @param version The header's version.
 * @returns The edges (empty for the current version), `FormatTooNew` for a newer version, or
 * `MissingMigrationEdge` for one older than the catalog knows.
 *
 * @example The chain of a v1 log
 * ```ts
 * import { chainFor, defaultCatalog } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const chain = chainFor(defaultCatalog, 1);
 * assert.deepEqual(Result.isSuccess(chain) && chain.success.map((e) => e.from), [1, 2]);
 * const newer = chainFor(defaultCatalog, 4);
 * assert.equal(Result.isFailure(newer) && newer.failure._tag, "FormatTooNew");
 * ```
 */
export function chainFor(
  catalog: Catalog,
  version: number,
): Result.Result<
  ReadonlyArray<MigrationEdge>,
  FormatTooNew | MissingMigrationEdge
> {
  if (version > catalog.current) {
    return Result.fail(
      new FormatTooNew({ line: 1, version, supported: catalog.current }),
    );
  }
  const chain: Array<MigrationEdge> = [];
  for (let v = version; v < catalog.current; v++) {
    const edge = catalog.edges.get(v);
    if (edge === undefined) {
      return Result.fail(
        new MissingMigrationEdge({ from: v, to: catalog.current }),
      );
    }
    chain.push(edge);
  }
  return Result.succeed(chain);
}

/** Pushes every item through one run, in order: what the run outputs. */
const pushAll = (
  run: EdgeRun,
  items: ReadonlyArray<EdgeOutput>,
): EdgeResult => {
  const out: Array<EdgeOutput> = [];
  for (const item of items) {
    const pushed = run.push(item.event, item.line);
    if (Result.isFailure(pushed)) return pushed;
    for (const o of pushed.success) out.push(o);
  }
  return Result.succeed(out);
};

const feed = (
  runs: ReadonlyArray<EdgeRun>,
  from: number,
  items: ReadonlyArray<EdgeOutput>,
): EdgeResult => {
  let current = items;
  for (let i = from; i < runs.length; i++) {
    const run = runs[i];
    if (run === undefined) break;
    const next = pushAll(run, current);
    if (Result.isFailure(next)) return next;
    current = next.success;
  }
  return Result.succeed(current);
};

/**
 * Start every edge of a chain over one log and compose them into one run: a pushed old event
 * line comes out as the current-version events it turns into.
 *
 * @param chain The edges, from {@link chainFor}.
 * @param header The old log's header.
 * @returns The composed run (the identity for an empty chain).
 *
 * @example Running the v0 chain on one event
 * ```ts
 * import { chainFor, defaultCatalog, startChain } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const header = { type: "session", version: 0, id: "s", createdAt: 0, isSeeded: false } as const;
 * const run = startChain(Result.getOrThrow(chainFor(defaultCatalog, 0)), header);
 * const out = run.push({ type: "turn/start", seq: 0, time: 1, data: { turn: 0 } }, 2);
 * assert.equal(Result.isSuccess(out) && out.success[0]?.event["type"], "turn/start");
 * ```
 */
export function startChain(
  chain: ReadonlyArray<MigrationEdge>,
  header: SessionHeaderJson,
): EdgeRun {
  const runs = chain.map((edge) => edge.start(header));
  return {
    push: (input: unknown, line: number): EdgeResult => {
      const first = runs[0];
      if (first === undefined) {
        // The empty chain is the identity; the current decoder judges the line.
        if (isJsonObject(input)) {
          return Result.succeed([{ line, event: input }]);
        }
        return Result.fail(
          new InvalidLegacyEnvelope({
            line,
            seq: undefined,
            version: header.version,
            reason: "event",
          }),
        );
      }
      const out = first.push(input, line);
      return Result.isFailure(out) ? out : feed(runs, 1, out.success);
    },
    end: (): EdgeResult => {
      let carried: ReadonlyArray<EdgeOutput> = [];
      for (let i = 0; i < runs.length; i++) {
        const run = runs[i];
        if (run === undefined) break;
        const pushed = pushAll(run, carried);
        if (Result.isFailure(pushed)) return pushed;
        const ended = run.end();
        if (Result.isFailure(ended)) return ended;
        carried = pushed.success.concat(ended.success);
      }
      return Result.succeed(carried);
    },
  };
}
