/**
 * Writers killed with SIGKILL while they write a PostgreSQL checkpoint row:
 * each run of `../store/checkpoint_kill_child.ts` appends to one session
 * and calls `store.checkpoint` after every fourth batch; it is killed 0–20
 * ms after it starts its first to third checkpoint (in the upsert, or just
 * before or after it). After each kill, an open (from the row the kill
 * left, if any) is the session a whole replay gives and no checkpoint is
 * rejected; a last run writes one more that the next open starts from.
 *
 * 4 kills in the normal suite, 24 under `FUZZ_PROFILE=long`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect, type Scope } from "effect";
import type { SessionStore } from "@palimpsest/session";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { assertSameSession, openedAndWhole } from "../_helpers/checkpoints.ts";
import { postgresTest } from "../_helpers/postgres.ts";
import { Rng } from "../_helpers/fuzz.ts";

const child = new URL("../store/checkpoint_kill_child.ts", import.meta.url)
  .pathname;
const KILLS = Deno.env.get("FUZZ_PROFILE") === "long" ? 24 : 4;

/** Runs the writer and kills it `delay` ms after its `nth` checkpoint starts. */
const killAt = async (url: string, nth: number, delay: number) => {
  const run = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", child, "postgres", url, "s", "100000", "manual"],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = run.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  let pid = 0;
  let killed = false;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const next = await reader.read();
    if (next.done) break;
    out += next.value;
    pid ||= Number(/^pid (\d+)/m.exec(out)?.[1] ?? 0);
    if ((out.match(/^checkpoint \d+$/gm)?.length ?? 0) >= nth) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      Deno.kill(pid, "SIGKILL");
      killed = true;
      break;
    }
  }
  while (!(await reader.read()).done) {
    // Drain.
  }
  await run.status;
  // Whether it was killed between the start and the end of that checkpoint.
  const started = out.match(/^checkpoint \d+$/gm)?.length ?? 0;
  const ended = out.match(/^checkpointed \d+$/gm)?.length ?? 0;
  return { killed, inside: started > ended };
};

const inStore = <A, E>(
  url: string,
  program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(program).pipe(
      Effect.provide(layerPostgresStore({ url, maxConnections: 2 })),
    ),
  );

/** An ordinary open and a whole replay of the session, compared. */
const assertOpenIsReplay = async (url: string) => {
  const { opened, whole } = await inStore(
    url,
    openedAndWhole("s"),
  );
  assert.equal(opened.report.checkpointRejected, undefined);
  assertSameSession(opened.session, whole.session);
  return {
    checkpoint: opened.report.checkpoint,
    events: opened.session.surface.nextSeq,
  };
};

postgresTest(
  `${KILLS} writers killed during PostgreSQL checkpoint writes: every open is a whole replay`,
  async (url) => {
    const rng = new Rng(20261205);
    let inside = 0;
    let fromCheckpoint = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      const outcome = await killAt(url, rng.int(1, 3), rng.int(0, 20));
      assert.ok(outcome.killed, `kill ${kill} never reached its checkpoint`);
      if (outcome.inside) inside++;
      if ((await assertOpenIsReplay(url)).checkpoint !== undefined) {
        fromCheckpoint++;
      }
    }
    const { events } = await assertOpenIsReplay(url);
    const last = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        child,
        "postgres",
        url,
        "s",
        String(events + 40),
        "manual",
      ],
      stdout: "null",
      stderr: "inherit",
    }).outputSync();
    assert.ok(last.success);
    const after = await assertOpenIsReplay(url);
    assert.ok((after.checkpoint ?? 0) > events);
    console.log(
      `checkpoint kills (PostgreSQL): ${KILLS} SIGKILLs 0-20 ms into a checkpoint (${inside} before it returned); opens equal to a whole replay: ${KILLS}/${KILLS} (${fromCheckpoint} from a checkpoint)`,
    );
  },
);
