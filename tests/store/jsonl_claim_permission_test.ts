/**
 * The writer claim in a Deno process run without some `--allow-*` flags
 * (issue 21, case 7): a dead Deno writer's claim is reclaimed without
 * `--allow-run` (its `flock` tells), a pid claim that cannot be judged is
 * `SessionLocked` saying the liveness is unknown and that `--allow-run` is
 * missing, and a refused file call names the flag it needs.
 *
 * @module
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { claimsOf, tempDir } from "../_helpers/store.ts";
import {
  denoWriter,
  killHolder,
  newSession,
} from "../_helpers/claim_writers.ts";

/** A pid that was alive a moment ago and is not any more. */
const deadPid = (): number => {
  const dead = spawnSync(Deno.execPath(), ["eval", "console.log(Deno.pid)"], {
    encoding: "utf8",
  });
  const pid = Number(dead.stdout.trim());
  assert.ok(pid > 0);
  return pid;
};

/** Opens session `s` under ROOT in a child with `flags`; its first line. */
const openWith = async (
  root: string,
  flags: ReadonlyArray<string>,
): Promise<string> => {
  const child = denoWriter(root, true, flags);
  const first = (await child.line()) ?? "";
  await child.end();
  await child.status;
  return first;
};

const errorOf = (line: string, tag: string): Record<string, unknown> => {
  assert.ok(line.startsWith(`${tag} `), line);
  return JSON.parse(line.slice(tag.length + 1));
};

Deno.test("a Deno process without --allow-run reclaims a killed Deno writer's claim", async () => {
  const root = tempDir("claim-perm-");
  const file = await newSession(root);
  await killHolder(root);
  assert.equal(claimsOf(file).length, 1);
  const first = await openWith(root, ["--allow-read", "--allow-write"]);
  assert.match(first, /^opened \d+$/);
  assert.deepEqual(claimsOf(file), []);
  fs.rmSync(root, { recursive: true });
});

Deno.test("a pid claim judged without --allow-run is SessionLocked naming --allow-run", async () => {
  const root = tempDir("claim-perm-");
  const file = await newSession(root);
  const pid = deadPid();
  // A 0.2 writer's lock, judged by its pid (as a Node writer's claim is).
  fs.writeFileSync(
    `${file}.lock`,
    JSON.stringify({ pid, start: null, token: "old" }),
  );
  const refused = errorOf(
    await openWith(root, ["--allow-read", "--allow-write"]),
    "SessionLocked",
  );
  assert.equal(refused["pid"], pid);
  assert.equal(refused["liveness"], "unknown");
  assert.equal(refused["permission"], "--allow-run");
  assert.match(String(refused["message"]), /could not tell.*--allow-run/);
  // The claim was left alone; with --allow-run it is reclaimed.
  assert.deepEqual(claimsOf(file), ["s.jsonl.lock"]);
  const first = await openWith(root, [
    "--allow-read",
    "--allow-write",
    "--allow-run",
  ]);
  assert.match(first, /^opened \d+$/);
  assert.deepEqual(claimsOf(file), []);
  fs.rmSync(root, { recursive: true });
});

Deno.test("a file call Deno refuses names the missing flag", async () => {
  const root = tempDir("claim-perm-");
  await newSession(root);
  const refused = errorOf(
    await openWith(root, ["--allow-read"]),
    "StorageError",
  );
  assert.equal(refused["permission"], "--allow-write");
  assert.match(String(refused["message"]), /--allow-write/);
  fs.rmSync(root, { recursive: true });
});
