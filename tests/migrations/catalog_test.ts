import assert from "node:assert/strict";
import { Result } from "effect";
import {
  chainFor,
  defaultCatalog,
  makeCatalog,
  type MigrationEdge,
  v0ToV1,
  v1ToV2,
  v2ToV3,
} from "../../migrations/mod.ts";
import { refusal, success } from "./_helpers.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";

Deno.test("makeCatalog()", async (t) => {
  await t.step("accepts the full chain in any order", () => {
    const catalog = Result.getOrThrow(makeCatalog([v2ToV3, v0ToV1, v1ToV2]));
    assert.deepEqual([...catalog.edges.keys()].sort(), [0, 1, 2]);
  });
  await t.step("fails with MissingMigrationEdge on a gap", () => {
    const error = failureOf(makeCatalog([v0ToV1, v2ToV3]));
    thenFails(error, "MissingMigrationEdge", { from: 1, to: 3 });
  });
  await t.step(
    "fails with MissingMigrationEdge when the newest edge is missing",
    () => {
      const error = failureOf(makeCatalog([v0ToV1, v1ToV2]));
      thenFails(error, "MissingMigrationEdge", { from: 2 });
    },
  );
  await t.step(
    "fails with MissingMigrationEdge on an edge that skips a version",
    () => {
      const skip: MigrationEdge = { from: 1, to: 3, start: v1ToV2.start };
      const error = failureOf(makeCatalog([v0ToV1, skip, v2ToV3]));
      thenFails(error, "MissingMigrationEdge", { from: 1 });
    },
  );
  await t.step(
    "fails with DuplicateMigrationEdge on two edges from one version",
    () => {
      const error = failureOf(makeCatalog([v0ToV1, v1ToV2, v1ToV2, v2ToV3]));
      thenFails(error, "DuplicateMigrationEdge", { from: 1 });
    },
  );
  await t.step(
    "accepts a catalog that starts at a later oldest version",
    () => {
      const catalog = Result.getOrThrow(makeCatalog([v2ToV3], { oldest: 2 }));
      thenFails(failureOf(chainFor(catalog, 1)), "MissingMigrationEdge");
    },
  );
});

Deno.test("chainFor()", async (t) => {
  await t.step("picks the edges from the header's version", () => {
    for (
      const [version, froms] of [[0, [0, 1, 2]], [1, [1, 2]], [2, [2]], [
        3,
        [],
      ]] as const
    ) {
      const chain = Result.getOrThrow(chainFor(defaultCatalog, version));
      assert.deepEqual(chain.map((e) => e.from), froms);
    }
  });
  await t.step("refuses a newer version with FormatTooNew", () => {
    const error = failureOf(chainFor(defaultCatalog, 4));
    thenFails(error, "FormatTooNew", { line: 1, version: 4, supported: 3 });
  });
});

Deno.test("migrate() refuses a bad header with InvalidLegacyHeader on line 1", async (t) => {
  const good = {
    type: "session",
    version: 1,
    id: "s",
    createdAt: 0,
    isSeeded: false,
  };
  const cases: ReadonlyArray<readonly [string, unknown, string]> = [
    ["not an object", [1], "header"],
    ["wrong type", { ...good, type: "event" }, "type"],
    ["fractional version", { ...good, version: 1.5 }, "version"],
    ["empty id", { ...good, id: "" }, "id"],
    ["missing createdAt", {
      type: "session",
      version: 1,
      id: "s",
      isSeeded: false,
    }, "createdAt"],
    ["isSeeded not boolean", { ...good, isSeeded: "no" }, "isSeeded"],
    ["unknown key", { ...good, extra: 1 }, "extra"],
    ["meta not an object", { ...good, meta: [] }, "meta"],
  ];
  for (const [name, header, reason] of cases) {
    await t.step(name, () => {
      const error = refusal([header]);
      thenFails(error, "InvalidLegacyHeader", { line: 1, reason: reason });
    });
  }
  await t.step("an empty input", () => {
    thenFails(refusal([]), "InvalidLegacyHeader");
  });
});

Deno.test("migrate() keeps parentSession and meta and writes version 3 in header key order", () => {
  const header = {
    meta: { a: 1 },
    parentSession: { id: "p", atSeq: 4 },
    isSeeded: true,
    createdAt: "2026-01-01T00:00:00Z",
    id: "s",
    version: 0,
    type: "session",
  };
  assert.equal(
    success([header]).text,
    '{"type":"session","version":3,"id":"s","createdAt":"2026-01-01T00:00:00Z","isSeeded":true,' +
      '"parentSession":{"id":"p","atSeq":4},"meta":{"a":1}}\n',
  );
});
