import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  cli,
  cliTaskFlags,
  cliWith,
  fixture,
  json,
  root,
  tempCopy,
} from "./_cli.ts";
import { claimsOf } from "../_helpers/store.ts";

/** Runs `verify FIXTURE --json`, checks it exits `code`, returns its report. */
const verifyJson = async (name: string, code: number) => {
  const run = await cli("verify", fixture(name), "--json");
  assert.equal(run.code, code);
  return json(run);
};

Deno.test("the real CLI as a subprocess", async (t) => {
  await t.step("verify accepts a valid log with exit 0", async () => {
    const report = await verifyJson("valid.jsonl", 0);
    assert.deepEqual(report, {
      ok: true,
      version: 3,
      events: 12,
      surface: 5,
      replacements: 1,
      rewinds: 0,
    });
  });

  await t.step("verify reports a torn tail and stays valid", async () => {
    const report = await verifyJson("torn-tail.jsonl", 0);
    assert.equal(report.ok, true);
    assert.equal(report.events, 6);
    assert.deepEqual(report.tornTail, { offset: 1169, bytes: 90 });
    assert.equal(report.error, undefined);
  });

  await t.step("verify refuses a corrupt line with exit 1", async () => {
    const report = await verifyJson("corrupt-line.jsonl", 1);
    assert.equal(report.ok, false);
    assert.equal(report.events, 3);
    assert.equal(report.surface, 1);
    assert.equal(report.error.tag, "InvalidJson");
    assert.equal(report.error.line, 5);
    assert.equal(typeof report.error.message, "string");
  });

  await t.step(
    "verify names the line, seq and rule of a fold error",
    async () => {
      const { error } = await verifyJson("fold-error.jsonl", 1);
      assert.deepEqual([error.tag, error.line, error.seq], [
        "NonContiguousSeq",
        9,
        8,
      ]);
    },
  );

  await t.step("verify reads a v1 log by migrating it in memory", async () => {
    const report = await verifyJson("v1.jsonl", 0);
    assert.equal(report.ok, true);
    assert.equal(report.version, 1);
    assert.equal(report.events, 26);
    assert.equal(report.replacements, 2);
  });

  await t.step("verify refuses a future version with exit 1", async () => {
    const report = await verifyJson("future.jsonl", 1);
    assert.equal(report.ok, false);
    assert.equal(report.version, 4);
    assert.equal(report.error.tag, "FormatTooNew");
    assert.equal(report.error.line, 1);
  });

  await t.step("a missing file is an I/O error, exit 2", async () => {
    const report = await verifyJson("missing.jsonl", 2);
    assert.equal(report.error.tag, "FileIoError");
  });

  await t.step("text output goes to stdout, errors to stderr", async () => {
    const ok = await cli("verify", fixture("valid.jsonl"));
    assert.equal(ok.code, 0);
    assert.notEqual(ok.stdout, "");
    assert.equal(ok.stderr, "");
    const bad = await cli("verify", fixture("fold-error.jsonl"));
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /NonContiguousSeq/);
  });

  await t.step("usage errors exit 2", async () => {
    assert.equal((await cli()).code, 2);
    const run = await cli("verify", "a", "b", "--json");
    assert.equal(run.code, 2);
    assert.equal(json(run).error.tag, "UsageError");
  });

  await t.step("--help exits 0", async () => {
    const run = await cli("explain", "--help");
    assert.equal(run.code, 0);
    assert.match(run.stdout, /USAGE\n {2}palimpsest explain /);
  });

  await t.step(
    "derive --json lists messages with their node seqs",
    async () => {
      const run = await cli("derive", fixture("valid.jsonl"), "--json");
      assert.equal(run.code, 0);
      const messages = json(run);
      assert.deepEqual(
        messages.map((m: { seq: number }) => m.seq),
        [2, 3, 4, 8, 9],
      );
      assert.deepEqual(
        messages.map((m: { message: { role: string } }) => m.message.role),
        ["system", "user", "assistant", "user", "assistant"],
      );
    },
  );

  await t.step("derive refuses an invalid log with exit 1", async () => {
    const run = await cli("derive", fixture("corrupt-line.jsonl"), "--json");
    assert.equal(run.code, 1);
    assert.equal(json(run).error.tag, "InvalidJson");
  });

  await t.step("migrate writes a v3 copy and never overwrites", async () => {
    const source = tempCopy("v1.jsonl");
    const before = fs.readFileSync(source);
    const out = path.join(path.dirname(source), "v1.v3.jsonl");
    const run = await cli("migrate", source, "--out", out, "--json");
    assert.equal(run.code, 0);
    const summary = json(run);
    assert.equal(summary.fromVersion, 1);
    assert.equal(summary.toVersion, 3);
    assert.deepEqual(fs.readFileSync(source), before);
    const verified = await cli("verify", out, "--json");
    assert.equal(json(verified).version, 3);
    assert.equal(json(verified).events, 26);
    const written = fs.readFileSync(out);
    const again = await cli("migrate", source, "--out", out, "--json");
    assert.equal(again.code, 2);
    assert.equal(json(again).error.tag, "TargetExists");
    assert.deepEqual(fs.readFileSync(out), written);
    assert.deepEqual(fs.readFileSync(source), before);
  });

  await t.step("repair closes a crashed turn durably", async () => {
    const file = tempCopy("torn-tail.jsonl", "crash.jsonl");
    const dry = await cli("repair", file, "--dry-run", "--json");
    assert.equal(dry.code, 0);
    assert.equal(json(dry).dryRun, true);
    assert.deepEqual(
      json(dry).closers.map((e: { type: string }) => e.type),
      ["tool/result", "step/end", "turn/end"],
    );
    assert.deepEqual(
      fs.readFileSync(file),
      fs.readFileSync(fixture("torn-tail.jsonl")),
    );
    const run = await cli("repair", file, "--json");
    assert.equal(run.code, 0);
    assert.deepEqual(json(run).transcriptViolations, []);
    const verified = json(await cli("verify", file, "--json"));
    assert.equal(verified.events, 9);
    assert.equal(verified.tornTail, undefined);
  });

  await t.step("schema prints a draft 2020-12 document", async () => {
    const run = await cli("schema");
    assert.equal(run.code, 0);
    assert.equal(
      json(run).$schema,
      "https://json-schema.org/draft/2020-12/schema",
    );
  });

  await t.step("explain shows a node's lineage", async () => {
    const run = await cli("explain", fixture("valid.jsonl"), "8", "--json");
    assert.equal(run.code, 0);
    const report = json(run);
    assert.equal(report.seq, 8);
    assert.equal(report.onSurface, true);
    assert.deepEqual(
      report.lineage[0].sources,
      [6],
    );
    const shadowed = json(
      await cli("explain", fixture("valid.jsonl"), "6", "--json"),
    );
    assert.equal(shadowed.onSurface, false);
    assert.deepEqual(shadowed.shadowedBy, [8]);
  });

  await t.step("stats counts events and measures prunes", async () => {
    const run = await cli("stats", fixture("valid.jsonl"), "--json");
    assert.equal(run.code, 0);
    const stats = json(run);
    assert.equal(stats.events, 12);
    assert.equal(stats.eventsByType["tool/result"], 2);
    assert.equal(stats.prunes.count, 1);
    assert.equal(stats.prunes.charsSaved, 2000 - 24);
    assert.equal(stats.compactions.count, 0);
  });

  await t.step(
    "the cli task's permissions reclaim a dead writer's lock",
    async () => {
      const file = tempCopy("torn-tail.jsonl", "dead.jsonl");
      const dir = path.dirname(file);
      const child = await new Deno.Command(Deno.execPath(), {
        args: [
          "eval",
          `import { makeJsonlStore } from "${
            path.join(root, "mod.ts")
          }"; import { Effect } from "effect";` +
          `const store = Effect.runSync(makeJsonlStore({ root: ${
            JSON.stringify(dir)
          } }));` +
          `await Effect.runPromise(Effect.scoped(Effect.andThen(` +
          `store.open("dead", { mode: "write" }),` +
          `Effect.sync(() => Deno.kill(Deno.pid, "SIGKILL")))));`,
        ],
        cwd: root,
        stdout: "null",
        stderr: "null",
      }).output();
      assert.equal(child.signal, "SIGKILL");
      assert.equal(claimsOf(file).length, 1);
      const output = await cliWith(cliTaskFlags(), "repair", file, "--json");
      assert.equal(output.code, 0, output.stdout);
      const report = JSON.parse(output.stdout);
      assert.equal(report.closers.length, 3);
      assert.deepEqual(claimsOf(file), []);
    },
  );
});
