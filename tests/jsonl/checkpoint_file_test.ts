/**
 * The JSONL checkpoint sidecar: one larger than any checkpoint of its log
 * is refused without being read (a sparse 1.5 GB sidecar beside a tiny
 * session), and a checkpoint write removes what a killed write left.
 *
 * @module
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { Effect } from "effect";
import { Draft } from "@palimpsest/session";
import { tempDir, useStore } from "../_helpers/store.ts";

const header = { id: "s", createdAt: 0, isSeeded: false };

/** A session `s` of two events under `root`, with a checkpoint. */
const stored = (root: string) =>
  useStore(root, (store) =>
    Effect.gen(function* () {
      const writer = yield* store.create(header);
      yield* store.append(writer, [Draft.user("hi"), Draft.user("there")]);
      return yield* store.checkpoint(writer);
    }));

Deno.test("a sidecar larger than any checkpoint of its log is unreadable without being read", async () => {
  const root = tempDir("checkpoint-bound-");
  assert.equal(await stored(root), 2);
  const file = path.join(root, "s.jsonl");
  const sidecar = `${file}.checkpoint`;
  assert.ok(fs.statSync(file).size < 1024);
  // A sparse 1.5 GB sidecar: read whole it would be a string longer than
  // the engine makes.
  const fd = fs.openSync(sidecar, "w");
  fs.ftruncateSync(fd, 1536 * 1024 * 1024);
  fs.closeSync(fd);
  const report = await useStore(root, (store) =>
    Effect.gen(function* () {
      return (yield* store.open("s")).report;
    }));
  assert.equal(report.checkpoint, undefined);
  assert.equal(report.checkpointRejected?.problem, "unreadable");
  assert.match(report.checkpointRejected?.detail ?? "", /1610612736 bytes/);
  assert.equal(report.events, 2);
  fs.rmSync(root, { recursive: true });
});

Deno.test("a checkpoint write removes the temporary files a killed write left", async () => {
  const root = tempDir("checkpoint-litter-");
  await stored(root);
  const dead = spawnSync(Deno.execPath(), ["eval", "console.log(Deno.pid)"], {
    encoding: "utf8",
  });
  const deadPid = Number(dead.stdout.trim());
  // What an older release's write left, and what a killed one leaves now.
  const legacy = path.join(root, "s.jsonl.checkpoint.tmp");
  const owned = path.join(
    root,
    `.s.jsonl.checkpoint.${randomUUID()}.p${deadPid}-x.tmp`,
  );
  fs.writeFileSync(legacy, "partial");
  fs.writeFileSync(owned, "partial");
  const at = await useStore(root, (store) =>
    Effect.gen(function* () {
      const writer = yield* store.open("s", { mode: "write" });
      yield* store.append(writer, [Draft.user("again")]);
      return yield* store.checkpoint(writer);
    }));
  assert.equal(at, 3);
  assert.deepEqual(
    fs.readdirSync(root).filter((name) => name.endsWith(".tmp")),
    [],
  );
  const reader = await useStore(root, (store) =>
    Effect.gen(function* () {
      return (yield* store.open("s")).report;
    }));
  assert.equal(reader.checkpoint, 3);
  fs.rmSync(root, { recursive: true });
});
