/**
 * `deno run -A checkpoint_kill_child.ts (jsonl ROOT | postgres URL) ID N
 * [manual]`: the writer the checkpoint kill campaigns kill. It prints
 * `pid P`, opens session ID for writing (creating it the first time), and
 * appends until the log holds N events, in batches of 10 user messages with
 * turns around them, the store writing a checkpoint every 40 events; before
 * each batch it prints `batch S` (S: the seq it starts at), and `done` at
 * the end. A turn spans three batches, so some checkpoints fall inside one.
 * With `manual`, the store writes none on its own: the child calls
 * `store.checkpoint` after every fourth batch, printing `checkpoint S`
 * before and `checkpointed S` after.
 *
 * @module
 */
import { Effect, type Layer, Schedule } from "effect";
import {
  Draft,
  layerJsonlStore,
  Session,
  SessionStore,
} from "@palimpsest/session";
import { layerPostgresStore } from "@palimpsest/session/postgres";

const [kind = "jsonl", where = ".", id = "s", total = "400", manual] =
  Deno.args;
const checkpoints = {
  everyEvents: manual === "manual" ? Number.MAX_SAFE_INTEGER : 40,
  onClose: false,
  holdLogUpTo: 0,
} as const;
const layer: Layer.Layer<SessionStore, unknown> = kind === "postgres"
  // A short lease: the writer before this one was killed, and holds the
  // session until its lease runs out.
  ? layerPostgresStore({
    url: where,
    maxConnections: 2,
    checkpoints,
    lease: "1 second",
  })
  : layerJsonlStore({ root: where, checkpoints });
const write = (line: string) =>
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
write(`pid ${Deno.pid}`);

await Effect.runPromise(
  Effect.scoped(Effect.gen(function* () {
    const store = yield* SessionStore;
    const list = yield* store.list();
    const writer = list.includes(id)
      ? yield* store.open(id, { mode: "write" }).pipe(
        Effect.retry({
          while: (error) => error._tag === "SessionLocked",
          schedule: Schedule.spaced("100 millis"),
          times: 50,
        }),
      )
      : yield* store.create({ id, createdAt: 0, isSeeded: false });
    for (;;) {
      const next = writer.session.surface.nextSeq;
      if (next >= Number(total)) break;
      write(`batch ${next}`);
      const batch = next / 10;
      const turn = Math.floor(batch / 3);
      const users = Array.from(
        { length: batch % 3 === 1 ? 10 : 9 },
        (_, i) => Draft.user(`message ${next + i}`),
      );
      const drafts = batch % 3 === 0
        ? [Draft.turnStart(turn), ...users]
        : batch % 3 === 2
        ? [...users, Draft.turnEnd(turn, "completed")]
        : users;
      yield* store.append(writer, drafts);
      if (manual === "manual" && batch % 4 === 3) {
        const at = writer.session.surface.nextSeq;
        write(`checkpoint ${at}`);
        yield* store.checkpoint(writer);
        write(`checkpointed ${at}`);
      }
    }
    return Session.heldFrom(writer.session);
  })).pipe(Effect.provide(layer)),
);
write("done");
