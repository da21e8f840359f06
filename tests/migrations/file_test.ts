import assert from "node:assert/strict";
import { Effect } from "effect";
import { migrateFile, type MigrationError } from "../../migrations/mod.ts";
import { parseLines, runMigrate } from "./_helpers.ts";
import { failureOf, type FieldsOf, thenFails } from "../_helpers/then.ts";

const fixture = (path: string): string =>
  Deno.readTextFileSync(new URL(`../fixtures/${path}`, import.meta.url));

const inTemp = async (
  f: (dir: string) => void | Promise<void>,
): Promise<void> => {
  const dir = Deno.makeTempDirSync({ prefix: "palimpsest-migrate-" });
  try {
    await f(dir);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
};

/** Runs `f` on `dir/name` holding `text`, in a fresh temporary `dir`. */
const withSource = (
  text: string,
  f: (dir: string, source: string) => void,
  name = "s.jsonl",
): Promise<void> =>
  inTemp((dir) => {
    const source = `${dir}/${name}`;
    Deno.writeTextFileSync(source, text);
    f(dir, source);
  });

/** The file at `target` holds what `runMigrate` makes of `text`. */
const assertMigratedAs = (target: string, text: string): void => {
  const expected = runMigrate(parseLines(text));
  assert.ok(expected.ok);
  assert.equal(Deno.readTextFileSync(target), expected.text);
};

const refusalOf = (
  effect: Effect.Effect<unknown, MigrationError>,
): MigrationError => failureOf(Effect.runSyncExit(effect));

const names = (dir: string): Array<string> =>
  [...Deno.readDirSync(dir)].map((e) => e.name).sort();

/**
 * Migrating `s.jsonl` holding `text` is refused with `tag` (and `fields`)
 * and creates nothing beside it.
 */
const refusedInPlace = <T extends MigrationError["_tag"]>(
  text: string,
  tag: T,
  fields?: FieldsOf<MigrationError, T>,
): Promise<void> =>
  withSource(text, (dir, source) => {
    thenFails(refusalOf(migrateFile(source)), tag, fields);
    assert.deepEqual(names(dir), ["s.jsonl"]);
  });

Deno.test("migrateFile()", async (t) => {
  await t.step(
    "writes the same bytes as migrate beside the source and leaves the source alone",
    () => {
      const text = fixture("v1/chunks.jsonl");
      return withSource(text, (dir, source) => {
        const summary = Effect.runSync(migrateFile(source));
        assert.equal(summary.target, `${dir}/chunks.v3.jsonl`);
        assert.equal(summary.fromVersion, 1);
        assert.equal(summary.eventsRead, parseLines(text).length - 1);
        assert.equal("tornTail" in summary, false);
        assertMigratedAs(summary.target, text);
        assert.equal(
          summary.eventsWritten,
          Deno.readTextFileSync(summary.target).split("\n").length - 2,
        );
        assert.equal(Deno.readTextFileSync(source), text);
        assert.deepEqual(names(dir), ["chunks.jsonl", "chunks.v3.jsonl"]);
      }, "chunks.jsonl");
    },
  );
  await t.step(
    "never overwrites an existing target: TargetExists",
    () =>
      withSource(fixture("v2/system-prompts.jsonl"), (dir, source) => {
        Deno.writeTextFileSync(`${dir}/taken.jsonl`, "mine\n");
        thenFails(
          refusalOf(migrateFile(source, { target: `${dir}/taken.jsonl` })),
          "TargetExists",
          { path: `${dir}/taken.jsonl` },
        );
        assert.equal(Deno.readTextFileSync(`${dir}/taken.jsonl`), "mine\n");
        assert.deepEqual(names(dir), ["s.jsonl", "taken.jsonl"]);
      }),
  );
  await t.step(
    "creates nothing when the log is refused",
    () =>
      refusedInPlace(
        fixture("v1/consumed-chunk.jsonl"),
        "ConsumedChunkReference",
        { line: 10 },
      ),
  );
  await t.step(
    "refuses a newer format with FormatTooNew and creates nothing",
    () => refusedInPlace(fixture("v2/too-new.jsonl"), "FormatTooNew"),
  );
  await t.step(
    "reports a torn final line and does not migrate it",
    () => {
      const text = fixture("v2/system-prompts.jsonl");
      const torn = '{"type":"turn/start","seq":30,"ti';
      return withSource(text + torn, (_dir, source) => {
        const summary = Effect.runSync(migrateFile(source));
        const lines = parseLines(text).length;
        assert.deepEqual(summary.tornTail, {
          line: lines + 1,
          bytes: torn.length,
        });
        assertMigratedAs(summary.target, text);
      });
    },
  );
  await t.step(
    "refuses a line that is not JSON with CorruptLegacyLine naming it",
    () => {
      const lines = fixture("v2/system-prompts.jsonl").split("\n");
      lines[4] = "{not json";
      return refusedInPlace(lines.join("\n"), "CorruptLegacyLine", {
        line: 5,
        excerpt: "{not json",
      });
    },
  );
  await t.step(
    "refuses an empty file with InvalidLegacyHeader",
    () => refusedInPlace("", "InvalidLegacyHeader"),
  );
  await t.step(
    "reports a missing source with FileIoError",
    () =>
      inTemp((dir) => {
        thenFails(
          refusalOf(migrateFile(`${dir}/none.jsonl`)),
          "FileIoError",
          {
            operation: "open",
            code: "ENOENT",
          },
        );
        assert.deepEqual(names(dir), []);
      }),
  );
  await t.step(
    "reads lines split across read chunks and multi-byte characters",
    () =>
      inTemp((dir) => {
        const lines = parseLines(fixture("v2/system-prompts.jsonl"));
        // One user message far longer than a 64 KiB read, full of multi-byte characters.
        const big = "é✓🙂".repeat(30_000);
        const text = lines.map((l) =>
          JSON.stringify(l)
        ).join("\n").replace('"text":"one"', `"text":"${big}"`) + "\n";
        Deno.writeTextFileSync(`${dir}/s.jsonl`, text);
        const summary = Effect.runSync(migrateFile(`${dir}/s.jsonl`));
        assertMigratedAs(summary.target, text);
        assert.ok(Deno.readTextFileSync(summary.target).includes(big));
      }),
  );
});
