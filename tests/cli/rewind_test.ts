/**
 * `rewind` and `branches` on the command line, and what `verify`, `stats`
 * and `explain` say of a log with rewinds.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Effect } from "effect";
import { layerJsonlStore } from "@palimpsest/session";
import { cliInProcess as run, tempDir } from "./_cli.ts";
import { storeTwoTurns } from "../_helpers/rewind_stored.ts";

/** A session file `r.jsonl` with turns 0 (seqs 0-3) and 1 (4-7). */
const twoTurns = (): string => {
  const dir = tempDir();
  Effect.runSync(Effect.scoped(
    Effect.provide(storeTwoTurns("r"), layerJsonlStore({ root: dir })),
  ));
  return path.join(dir, "r.jsonl");
};

const doc = (stdout: string) => JSON.parse(stdout);

/** `rewind FILE --to SEQ ...flags --json`. */
const rewindJson = (file: string, to: string, ...flags: string[]) =>
  run("rewind", file, "--to", to, ...flags, "--json");

Deno.test("rewind and branches", async (t) => {
  const file = twoTurns();

  await t.step(
    "a point inside a turn is refused, exit 1, nothing written",
    async () => {
      const before = fs.readFileSync(file, "utf8");
      const r = await rewindJson(file, "5");
      assert.equal(r.code, 1);
      assert.equal(doc(r.stdout).error.tag, "RewindPointInsideWork");
      assert.equal(fs.readFileSync(file, "utf8"), before);
    },
  );

  await t.step(
    "--drops-turns-from refuses what it does not declare",
    async () => {
      const r = await rewindJson(file, "3", "--drops-turns-from", "2");
      assert.equal(r.code, 1);
      assert.equal(doc(r.stdout).error.tag, "RewindDropsUnexpectedTurns");
    },
  );

  await t.step(
    "rewinds with a new message, citing what it takes off",
    async () => {
      const r = await rewindJson(
        file,
        "3",
        "--text",
        "edited",
        "--drops-turns-from",
        "1",
      );
      assert.equal(r.code, 0);
      assert.deepEqual(doc(r.stdout), {
        ok: true,
        seq: 8,
        toSeq: 3,
        takenOff: [5, 6],
        surface: 3,
      });
    },
  );

  await t.step(
    "back to the first branch's tip, with an empty message",
    async () => {
      const r = await run("rewind", file, "--to", "7");
      assert.equal(r.code, 0);
      assert.match(r.stdout, /rewound to 7 at seq 9, took 1 node off/);
    },
  );

  await t.step("branches lists the tree, the current one marked", async () => {
    const r = await run("branches", file, "--json");
    assert.equal(r.code, 0);
    assert.deepEqual(
      doc(r.stdout).branches.map((
        b: Record<string, unknown>,
      ) => [b.fromSeq, b.leavesAt, b.tipSeq, b.depth, b.current]),
      [[0, null, 7, 0, false], [8, 3, 8, 1, false], [9, 7, 9, 1, true]],
    );
    const text = await run("branches", file);
    assert.match(text.stdout, /^r\.jsonl|: 3 branches$/m);
    assert.match(text.stdout, /^ {4}8\.\.8 \(after 3\), 0 turns: "edited"$/m);
    assert.match(
      text.stdout,
      /^ {4}\* 9\.\.9 \(after 7\), 0 turns \(current\)$/m,
    );
  });

  await t.step("verify, stats and explain know the rewinds", async () => {
    const verify = await run("verify", file, "--json");
    assert.equal(verify.code, 0);
    assert.equal(doc(verify.stdout).rewinds, 2);
    assert.match((await run("verify", file)).stdout, /, 2 rewinds$/m);
    const stats = doc((await run("stats", file, "--json")).stdout);
    assert.equal(stats.rewinds.count, 2);
    assert.deepEqual(
      stats.rewinds.items.map((i: Record<string, unknown>) => i.shadowed),
      [[5, 6], [8]],
    );
    assert.equal(stats.compactions.count, 0);
    const explain = await run("explain", file, "8", "--json");
    assert.deepEqual(doc(explain.stdout).branch, {
      fromSeq: 8,
      tipSeq: 8,
      current: false,
    });
    assert.deepEqual(doc(explain.stdout).shadowedBy, [9]);
    assert.match(
      (await run("explain", file, "8")).stdout,
      /on the branch 8\.\.8 \(not current/,
    );
  });

  await t.step("a file not named ID.jsonl is refused, exit 2", async () => {
    const other = path.join(tempDir(), "notes.txt");
    fs.copyFileSync(file, other);
    const r = await run("rewind", other, "--to", "3");
    assert.equal(r.code, 2);
  });
});
