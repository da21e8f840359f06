/**
 * A publish killed half way leaves nothing that the next publish to the
 * same target does not clean (issue 21, case 9). `publish_child.ts` runs
 * `migrateFile`, `importFile`, `writeSessionHtmlFile` or the store's
 * `create` under `strace`, which stalls every `fsync`; once it is stalled
 * in the fsync of its temporary file (written whole, not yet linked) the
 * test kills it with SIGKILL. A killed run leaves its temporary file; the
 * next run removes it (and, killed too, leaves its own); a third run
 * publishes the target and leaves none.
 *
 * Also, without kills: the sweep removes a dead pid owner's temporary file
 * and never a live one's (flock or pid), nor a name it does not own.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { publishBytes } from "../../src/fs/durable_file.ts";
import { createOwnedTemp, releaseOwnedTemp } from "../../src/fs/owner.ts";
import { tempDir } from "../_helpers/store.ts";
import { spawnTraced } from "../_helpers/line_process.ts";

const child = new URL("./publish_child.ts", import.meta.url).pathname;

/** The hidden temporary files under `dir` (one level of subfolders too). */
const tempsUnder = (dir: string): string[] =>
  fs.readdirSync(dir, { recursive: true }).map(String)
    .filter((name) => path.basename(name).endsWith(".tmp")).sort();

const operations = [
  { op: "migrate", target: "s.v3.jsonl" },
  { op: "import", target: "c.v3.jsonl" },
  { op: "view", target: "s.html" },
  { op: "create", target: path.join("store", "s.jsonl") },
] as const;

const prepare = (dir: string): void => {
  const lines = [
    '{"type":"session","version":2,"id":"s","createdAt":0,"isSeeded":false}',
  ];
  for (let seq = 0; seq < 2000; seq++) {
    lines.push(
      `{"type":"turn/start","seq":${seq},"time":${seq},"data":{"turn":${seq}}}`,
    );
  }
  fs.writeFileSync(path.join(dir, "s.jsonl"), `${lines.join("\n")}\n`);
  fs.writeFileSync(
    path.join(dir, "c.jsonl"),
    '{"type":"user","sessionId":"c1","message":{"role":"user","content":"hi"}}\n',
  );
};

/** Runs `op` under strace and kills it stalled in its temp file's fsync. */
const killMidPublish = async (op: string, dir: string): Promise<void> => {
  const log = path.join(dir, `strace.${op}.${randomUUID()}.log`);
  const { traced, reader, pid } = await spawnTraced(
    log,
    "fsync,fdatasync",
    1_000_000,
    [child, op, dir],
    "null",
  );
  const deadline = Date.now() + 60_000;
  for (;;) {
    const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
    // Entered, not returned: the temporary file is whole and not linked.
    if (/fsync\(\d+<[^>]*\.tmp>(?:$| <unfinished \.\.\.>$)/m.test(text)) break;
    assert.ok(Date.now() < deadline, `${op} never reached its fsync: ${text}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  Deno.kill(pid, "SIGKILL");
  while (!(await reader.read()).done) {
    // Drain.
  }
  await traced.status;
  fs.rmSync(log);
};

Deno.test("a killed publish leaves nothing the next publish does not clean", async (t) => {
  const dir = tempDir("publish-kill-");
  prepare(dir);
  let kills = 0;
  let leftByKills = 0;
  for (const { op, target } of operations) {
    await t.step(op, async () => {
      await killMidPublish(op, dir);
      const first = tempsUnder(dir);
      assert.equal(first.length, 1, `a killed ${op} run left ${first}`);
      // The next run removes the first run's file before it is killed too.
      await killMidPublish(op, dir);
      const second = tempsUnder(dir);
      assert.equal(second.length, 1, `two killed ${op} runs left ${second}`);
      assert.notDeepEqual(second, first);
      kills += 2;
      leftByKills += 2;
      assert.ok(!fs.existsSync(path.join(dir, target)));
      const rerun = spawnSync(
        Deno.execPath(),
        ["run", "-A", child, op, dir],
        { encoding: "utf8" },
      );
      assert.equal(rerun.status, 0, rerun.stderr);
      assert.deepEqual(tempsUnder(dir), []);
      assert.ok(fs.statSync(path.join(dir, target)).size > 0);
    });
  }
  console.log(
    `publish kills: ${kills} SIGKILLs mid-publish, each leaving its temporary file (${leftByKills}); left after the next publish to each target: ${
      tempsUnder(dir).length
    }`,
  );
  fs.rmSync(dir, { recursive: true });
});

Deno.test("the sweep removes dead owners' temporary files only", () => {
  const dir = tempDir("publish-sweep-");
  const target = path.join(dir, "out.jsonl");
  const dead = spawnSync(Deno.execPath(), ["eval", "console.log(Deno.pid)"], {
    encoding: "utf8",
  });
  const deadPid = Number(dead.stdout.trim());
  const named = (owner: string) =>
    path.join(dir, `.out.jsonl.${randomUUID()}.${owner}.tmp`);
  const deadPidTemp = named(`p${deadPid}-x`);
  const livePidTemp = named(`p${Deno.pid}-x`);
  const unowned = path.join(dir, `.out.jsonl.${randomUUID()}.tmp`);
  const otherTarget = path.join(
    dir,
    `.other.${randomUUID()}.p${deadPid}-x.tmp`,
  );
  for (const file of [deadPidTemp, livePidTemp, unowned, otherTarget]) {
    fs.writeFileSync(file, "partial");
  }
  // A live flock owner: this process, in the middle of its own publish.
  const created = createOwnedTemp(dir, "out.jsonl");
  assert.ok("ok" in created);
  const liveFlock = created.ok;
  Effect.runSync(publishBytes(target, new TextEncoder().encode("content\n")));
  assert.equal(fs.readFileSync(target, "utf8"), "content\n");
  assert.ok(!fs.existsSync(deadPidTemp), "a dead pid owner's file stays");
  for (const file of [livePidTemp, unowned, otherTarget, liveFlock.path]) {
    assert.ok(fs.existsSync(file), `${path.basename(file)} was removed`);
  }
  releaseOwnedTemp(liveFlock);
  assert.ok(!fs.existsSync(liveFlock.path));
  fs.rmSync(dir, { recursive: true });
});
