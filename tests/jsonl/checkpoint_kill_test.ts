/**
 * Writers killed with SIGKILL while they write a JSONL checkpoint: each run
 * of `../store/checkpoint_kill_child.ts` appends to one session under
 * `strace`, which slows every `fsync` and `rename`, and is killed at one of
 * four points of its first or second checkpoint write (its temporary
 * file's fsync or the rename entered, the rename done, the folder's fsync
 * entered). After each kill, an open (from the checkpoint the kill left)
 * is the session a whole replay gives, no checkpoint is rejected, and at
 * most the killed run's temporary file is left; the next write removes
 * it, and a last run to the end leaves none.
 *
 * 4 kills in the normal suite, 24 under `FUZZ_PROFILE=long`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { Effect } from "effect";
import { assertSameSession, openedAndWhole } from "../_helpers/checkpoints.ts";
import { tempDir, useStore, withStore } from "../_helpers/store.ts";
import { Rng } from "../_helpers/fuzz.ts";
import { spawnTraced } from "../_helpers/line_process.ts";

const child = new URL("../store/checkpoint_kill_child.ts", import.meta.url)
  .pathname;
const KILLS = Deno.env.get("FUZZ_PROFILE") === "long" ? 24 : 4;

/** The checkpoint renames done, in an strace log. */
const renamed = (text: string): number =>
  text.match(
    /^\d+ +rename(?:at2?)?\([^\n]*\.jsonl\.checkpoint\.[^\n]*\) += 0[^\n]*$/gm,
  )?.length ?? 0;

/**
 * The kill points: whether an strace log (whose last line, unfinished, is
 * the call the writer is in) shows the writer there in its `nth`
 * checkpoint write.
 */
const points: ReadonlyArray<
  readonly [string, (text: string, nth: number) => boolean]
> = [
  // The temporary file's fsync entered: whole, not yet renamed.
  [
    "temp fsync",
    (text, nth) =>
      renamed(text) === nth - 1 &&
      /\n\d+ +fsync\(\d+<[^>\n]*\.jsonl\.checkpoint\.[^>\n]*\.tmp>$/.test(text),
  ],
  // The rename entered, not done.
  [
    "rename",
    (text, nth) =>
      renamed(text) === nth - 1 &&
      /\n\d+ +rename(?:at2?)?\([^\n]*\.jsonl\.checkpoint\.[^\n]*\.jsonl\.checkpoint"$/
        .test(text),
  ],
  // The rename done.
  ["renamed", (text, nth) => renamed(text) >= nth],
  // The folder's fsync after it entered.
  [
    "folder fsync",
    (text, nth) =>
      renamed(text) === nth && /\n\d+ +fsync\(\d+<[^>\n]*\/store>$/.test(text),
  ],
];

const temps = (dir: string): string[] =>
  fs.readdirSync(dir).filter((name) => name.endsWith(".tmp")).sort();

/** Runs the writer under strace and kills it at `point`'s `nth` match. */
const killAt = async (
  root: string,
  there: (text: string, nth: number) => boolean,
  nth: number,
): Promise<boolean> => {
  const log = path.join(path.dirname(root), `strace.${randomUUID()}.log`);
  const errors = path.join(path.dirname(root), "child.stderr");
  const { traced, reader, pid } = await spawnTraced(
    log,
    "fsync,rename,renameat,renameat2",
    40_000,
    [child, "jsonl", root, "s", "100000"],
    "piped",
  );
  const stderr = traced.stderr.pipeTo(
    (await Deno.open(errors, { write: true, create: true, truncate: true }))
      .writable,
  );
  const deadline = Date.now() + 30_000;
  let reached = false;
  const exited = traced.status.then(() => true);
  while (Date.now() < deadline) {
    if (await Promise.race([exited, Promise.resolve(false)])) break;
    const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
    if (there(text, nth)) {
      reached = true;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  Deno.kill(pid, "SIGKILL");
  // strace's delay injection can wedge on a many-threaded process
  // ("delayed wait data set already"): a run that never got there is
  // ended whole and tried again.
  if (!reached) traced.kill("SIGKILL");
  while (!(await reader.read()).done) {
    // Drain.
  }
  await traced.status;
  await stderr;
  fs.rmSync(log, { force: true });
  if (!reached) {
    console.error(fs.readFileSync(errors, "utf8").slice(-2000));
  }
  return reached;
};

/** An ordinary open and a whole replay of the session, compared. */
const assertOpenIsReplay = async (root: string) => {
  const { opened, whole } = await withStore(
    root,
    openedAndWhole("s"),
  );
  assert.equal(opened.report.checkpointRejected, undefined);
  assert.equal(opened.report.tornTail, undefined);
  assertSameSession(opened.session, whole.session);
  return opened.report.checkpoint;
};

Deno.test(`${KILLS} writers killed during JSONL checkpoint writes: every open is a whole replay, no temporary file outlives the next write`, async () => {
  const dir = tempDir("cpkill-");
  const root = path.join(dir, "store");
  fs.mkdirSync(root);
  const rng = new Rng(20261204);
  const byPoint = new Map<string, number>();
  let fromCheckpoint = 0;
  let leftByKills = 0;
  let retries = 0;
  for (let kill = 0; kill < KILLS; kill++) {
    const [name, there] = points[kill % points.length] ?? points[0]!;
    const nth = rng.int(1, 2);
    let reached = await killAt(root, there, nth);
    for (let retry = 0; !reached && retry < 3; retry++) {
      retries++;
      // A run ended without reaching its point: its writer was killed
      // all the same, so the open after it must be a replay too.
      await assertOpenIsReplay(root);
      reached = await killAt(root, there, nth);
    }
    assert.ok(reached, `kill ${kill} never reached its ${name}`);
    byPoint.set(name, (byPoint.get(name) ?? 0) + 1);
    const left = temps(root);
    assert.ok(left.length <= 1, `kill ${kill} (${name}) left ${left}`);
    leftByKills += left.length;
    if ((await assertOpenIsReplay(root)) !== undefined) fromCheckpoint++;
  }
  // A last run to the end writes checkpoints and leaves nothing behind.
  const events = await useStore(root, (store) =>
    Effect.gen(function* () {
      return (yield* store.open("s")).session.surface.nextSeq;
    }));
  const last = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", child, "jsonl", root, "s", String(events + 50)],
    stdout: "null",
    stderr: "inherit",
  }).outputSync();
  assert.ok(last.success);
  assert.deepEqual(temps(root), []);
  // It wrote one (every 40 events) past where the killed runs left it.
  assert.ok(((await assertOpenIsReplay(root)) ?? 0) > events);
  console.log(
    `checkpoint kills (JSONL): ${KILLS} SIGKILLs (${
      [...byPoint].map(([p, n]) => `${n} at ${p}`).join(", ")
    }); opens equal to a whole replay: ${KILLS}/${KILLS} (${fromCheckpoint} from a checkpoint); temporary files left by kills: ${leftByKills}, after the next write: 0; runs tried again after strace wedged: ${retries}`,
  );
  fs.rmSync(dir, { recursive: true });
});
