/**
 * `dropped` on the command line: given a log with a prune, two compactions
 * (the second over the first's summary) and a rewind that undoes the
 * second, when run without a compaction it lists them, and when given one
 * (by id or seq) it prints what it took off, as text and as JSON.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { cliInProcess as run, tempDir } from "./_cli.ts";
import { droppedLog, writeLogFile } from "../_helpers/dropped_log.ts";

const doc = (stdout: string) => JSON.parse(stdout);

Deno.test("dropped", async (t) => {
  const file = writeLogFile(droppedLog(), tempDir());

  await t.step(
    "without a compaction, lists them with ids and seqs",
    async () => {
      const r = await run("dropped", file);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trimEnd().split("\n");
      assert.match(lines[0] ?? "", /: 2 compactions, 1 prune$/);
      assert.deepEqual(lines.slice(1), [
        "  prune at 7: record 6, replacement 7; branch 0..16, on the current path",
        '  "c1": start 8, summary 9, replacement 10, end 11; branch 0..16, on the current path',
        '  "c2": start 13, summary 14, replacement 15, end 16; branch 0..16, not on the current path (a rewind went back before it; "branches FILE")',
      ]);
      const json = doc((await run("dropped", file, "--json")).stdout);
      assert.deepEqual(
        json.compactions.map((c: Record<string, unknown>) => [
          c["kind"],
          c["compactionId"],
          c["replacementSeq"],
        ]),
        [["prune", null, 7], ["compaction", "c1", 10], [
          "compaction",
          "c2",
          15,
        ]],
      );
    },
  );

  await t.step("a compaction by id: its nodes as a table", async () => {
    const r = await run("dropped", file, "c2");
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.equal(
      lines[0],
      'compaction "c2": start 13, summary 14, replacement 15, end 16; branch 0..16, not on the current path (a rewind went back before it; "branches FILE")',
    );
    assert.match(
      lines[1] ?? "",
      /^took off 2 nodes \(18 chars, ~\d+ tokens\), seqs 4, 10$/,
    );
    assert.match(
      lines[3] ?? "",
      /^ +10 +user\/message +user +12 +listed files \(a compaction "c1"\)$/,
    );
    assert.match(lines[4] ?? "", /^ +4 +user\/message +user +6 +thanks$/);
    assert.equal(
      lines[5],
      "replaced by 15 (21 chars), off the surface; taken off by 17 (a rewind)",
    );
  });

  await t.step("a prune by seq, as JSON", async () => {
    const r = await run("dropped", file, "6", "--json");
    assert.equal(r.code, 0, r.stderr);
    const json = doc(r.stdout);
    assert.equal(json.ok, true);
    assert.equal(json.compaction.kind, "prune");
    assert.equal(json.compaction.onCurrentPath, true);
    assert.deepEqual(
      json.dropped.map((
        n: Record<string, unknown>,
      ) => [n["seq"], n["toolCallId"]]),
      [[3, "c1"]],
    );
    assert.deepEqual(json.ranges, [{ first: 3, last: 3 }]);
    assert.deepEqual(json.replacement, {
      seq: 7,
      chars: 8,
      tokens: json.replacement.tokens,
      onSurface: false,
    });
    assert.deepEqual(json.takenOffBy, { seq: 10, kind: "compaction" });
  });

  await t.step(
    "the first compaction lists the tool call and the pruned result",
    async () => {
      const json = doc((await run("dropped", file, "c1", "--json")).stdout);
      assert.deepEqual(
        json.dropped.map((n: Record<string, unknown>) => n["seq"]),
        [0, 1, 7],
      );
      assert.deepEqual(json.dropped[1].toolCalls, [{ id: "c1", name: "ls" }]);
      assert.deepEqual(json.dropped[2].replacement, {
        kind: "prune",
        compactionId: null,
      });
      assert.equal(json.replacement.onSurface, true);
    },
  );

  await t.step(
    "an unknown compaction: exit 2, the known ones listed",
    async () => {
      const r = await run("dropped", file, "nope");
      assert.equal(r.code, 2);
      assert.match(r.stderr, /CompactionNotFound/);
      assert.match(r.stderr, /"c1", "c2"/);
      assert.match(r.stderr, /7, 10, 15/);
      const json = doc((await run("dropped", file, "99", "--json")).stdout);
      assert.equal(json.ok, false);
      assert.equal(json.error.tag, "CompactionNotFound");
    },
  );

  await t.step("a file that is not a log: exit 1, no listing", async () => {
    const bad = path.join(tempDir(), "x.jsonl");
    fs.writeFileSync(bad, "not json\n");
    const r = await run("dropped", bad, "--json");
    assert.equal(r.code, 1);
    assert.equal(doc(r.stdout).ok, false);
  });
});
