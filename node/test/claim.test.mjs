// The JSONL writer claim under Node, which has no flock: a Node writer's
// claim names its pid, and Node judges every claim by pid. Node and Deno
// writers exclude each other on the same file in both directions, and a
// killed writer of either runtime is reclaimed by the other.
// Deno writers are tests/store/claim_writer.ts, run with `deno` from PATH.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Effect, Exit, Scope } from "effect";
import { makeJsonlStore } from "@palimpsest/session";

// The tests run in a scratch project (node/smoke.sh), which names the
// repository's checkout in PALIMPSEST_REPO for the Deno writer script.
const repo = process.env.PALIMPSEST_REPO ??
  fileURLToPath(new URL("../..", import.meta.url));
const denoWriterScript = path.join(repo, "tests/store/claim_writer.ts");
const dist = fileURLToPath(import.meta.resolve("@palimpsest/session"));
const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-claim-"));
const claimsOf = (root) =>
  fs.readdirSync(root).filter((name) => name.startsWith("s.jsonl.lock"));

/** A child process; resolves its first stdout line. */
const start = (command, args) => {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  let buffer = "";
  const first = new Promise((resolve) => {
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      const nl = buffer.indexOf("\n");
      if (nl >= 0) resolve(buffer.slice(0, nl));
    });
    child.on("close", () => resolve(buffer));
  });
  const closed = new Promise((resolve) => child.on("close", resolve));
  return { child, first, closed };
};

const denoWriter = (root) =>
  start("deno", ["run", "-A", denoWriterScript, root, "s", "now"]);

const nodeWriter = (root) =>
  start(process.execPath, [
    "--input-type=module",
    "-e",
    `import { Effect, Scope } from "effect";
     import { makeJsonlStore } from ${JSON.stringify(dist)};
     const store = await Effect.runPromise(makeJsonlStore({ root: ${JSON.stringify(root)} }));
     const scope = await Effect.runPromise(Scope.make());
     await Effect.runPromise(Scope.provide(store.open("s", { mode: "write" }), scope));
     console.log("opened " + process.pid);
     setInterval(() => {}, 1000);`,
  ]);

/** Opens session s for writing in this process; the handle's scope, or the error. */
const openHere = async (store) => {
  const scope = await Effect.runPromise(Scope.make());
  const exit = await Effect.runPromiseExit(
    Scope.provide(store.open("s", { mode: "write" }), scope),
  );
  if (Exit.isSuccess(exit)) return { scope };
  await Effect.runPromise(Scope.close(scope, Exit.void));
  return { error: exit.cause.reasons[0]?.error };
};

const kill = async (writer) => {
  writer.child.kill("SIGKILL");
  await writer.closed;
};

test("Node and Deno writers exclude each other and reclaim each other's dead claims", async () => {
  const root = tempDir();
  const store = await Effect.runPromise(makeJsonlStore({ root }));
  await Effect.runPromise(
    Effect.scoped(store.create({ id: "s", createdAt: 0, isSeeded: false })),
  );

  // A Node writer's claim: its pid, no flock.
  const held = await openHere(store);
  assert.ok(held.scope);
  const [name] = claimsOf(root);
  const claim = JSON.parse(fs.readFileSync(path.join(root, name), "utf8"));
  assert.equal(claim.pid, process.pid);
  assert.equal(claim.flock, false);
  assert.equal((await openHere(store)).error?._tag, "SessionLocked");
  const deno = denoWriter(root);
  assert.match(await deno.first, /^SessionLocked /);
  deno.child.stdin.end();
  await deno.closed;
  await Effect.runPromise(Scope.close(held.scope, Exit.void));
  assert.deepEqual(claimsOf(root), []);

  // A Deno writer (flock) excludes Node, and once killed Node reclaims it.
  const holder = denoWriter(root);
  assert.match(await holder.first, /^opened \d+$/);
  assert.equal((await openHere(store)).error?._tag, "SessionLocked");
  await kill(holder);
  const after = await openHere(store);
  assert.ok(after.scope, String(after.error?.message));
  await Effect.runPromise(Scope.close(after.scope, Exit.void));

  // A killed Node writer is reclaimed by Deno.
  const nodeHolder = nodeWriter(root);
  assert.match(await nodeHolder.first, /^opened \d+$/);
  await kill(nodeHolder);
  assert.equal(claimsOf(root).length, 1);
  const reclaimer = denoWriter(root);
  assert.match(await reclaimer.first, /^opened \d+$/);
  reclaimer.child.stdin.end();
  await reclaimer.closed;
  assert.deepEqual(claimsOf(root), []);
  fs.rmSync(root, { recursive: true });
});

// The claim storm with both runtimes: the repository's storm
// (tests/_helpers/claim_storm.ts, run with deno) with every second writer a
// Node writer on this installed package (_storm_writer.mjs): five writers at
// once, some under strace with every claim call delayed, a SIGKILL every
// 1.5 s, dead and pid-reused claims planted. 15 s here; 120 s under
// FUZZ_PROFILE=long.
test("a claim storm of Node and Deno writers never admits two and loses no acknowledged append", () => {
  const seconds = process.env.FUZZ_PROFILE === "long" ? 120 : 15;
  const storm = path.join(repo, "tests/_helpers/claim_storm.ts");
  const writer = fileURLToPath(new URL("./_storm_writer.mjs", import.meta.url));
  const run = spawnSync(
    "deno",
    ["run", "-A", storm, String(seconds), "--node", process.execPath, writer],
    { encoding: "utf8", timeout: (seconds + 120) * 1000 },
  );
  const report = run.stdout.split("\n").find((line) => line.startsWith("claim storm:")) ?? "";
  console.log(report);
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr.slice(-2000)}`);
  assert.match(report, /\(\d+ Node, \d+ under strace\)/);
  assert.doesNotMatch(report, /\(0 Node/);
  assert.match(report, /overlaps 0, seqs acknowledged twice 0/);
  const [, acknowledged, found] = /acknowledged appends (\d+), found (\d+)/.exec(report) ?? [];
  assert.ok(Number(acknowledged) > 0);
  assert.equal(found, acknowledged);
});
