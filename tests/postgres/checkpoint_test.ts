/**
 * The PostgreSQL layer's checkpoints: written by the writer (every K events,
 * on close, on demand) as one row per session, opened from with only the
 * rows after them read, the same session as a whole replay, before and
 * after appending; a row that does not match is reported and the open
 * replays the whole log; the table is added to a database of an earlier
 * release without touching its sessions.
 */
import assert from "node:assert/strict";
import { Effect, Result } from "effect";
import {
  deriveMessages,
  Session,
  type SessionEvent,
  type SessionHandle,
} from "@palimpsest/session";
import type { PostgresSessionStore } from "../../src/postgres/mod.ts";
import { postgresTest, querySql, withPgStore } from "../_helpers/postgres.ts";
import { workload } from "../_helpers/workload.ts";

const header = (id: string) => ({ id, createdAt: 1, isSeeded: false });
const { events } = workload({ events: 6000, lines: false });

const checkpointSeq = async (url: string, id: string) => {
  const rows = await querySql(
    url,
    "SELECT seq FROM palimpsest_checkpoints WHERE session_id = $1",
    [id],
  );
  return rows[0] === undefined ? undefined : Number(rows[0].seq);
};

/** Appends `batch` in batches of 250 through a writer. */
const appendAll = (
  store: PostgresSessionStore,
  handle: SessionHandle,
  batch: ReadonlyArray<SessionEvent>,
) =>
  Effect.gen(function* () {
    for (let i = 0; i < batch.length; i += 250) {
      yield* store.appendEvents(handle, batch.slice(i, i + 250));
    }
  });

/**
 * Creates session `id` holding the workload's first `count` events;
 * returns its writer.
 */
const createWith = (store: PostgresSessionStore, id: string, count: number) =>
  Effect.flatMap(
    store.create(header(id)),
    (writer) =>
      Effect.as(appendAll(store, writer, events.slice(0, count)), writer),
  );

/** What a session shows: what the model sees and the tail of the log. */
const shown = (session: Session, tailFrom: number) => ({
  nextSeq: session.surface.nextSeq,
  nodes: session.surface.length,
  messages: deriveMessages(session.surface),
  tail: Result.getOrThrow(Session.events(session, tailFrom)),
});

// Every session here is past `holdLogUpTo`: it gets checkpoints, and an
// open without `wholeLog` holds only its surface and its open work.
const policy = {
  checkpoints: { everyEvents: 1000, onClose: 1, holdLogUpTo: 0 },
};

postgresTest(
  "a writer writes checkpoints every K events and on close; an open starts from the newest",
  async (url) => {
    const seen = await withPgStore(url, (store) =>
      Effect.gen(function* () {
        const writer = yield* createWith(store, "k", 2600);
        const whileOpen = yield* Effect.promise(() => checkpointSeq(url, "k"));
        yield* store.close(writer);
        const afterClose = yield* Effect.promise(() => checkpointSeq(url, "k"));
        const reader = yield* store.open("k");
        return { whileOpen, afterClose, report: reader.report };
      }), policy);
    // Batches of 250: the first past 1,000 events since the last checkpoint.
    assert.equal(seen.whileOpen, 2000);
    assert.equal(seen.afterClose, 2600);
    assert.equal(seen.report.checkpoint, 2600);
    assert.equal(seen.report.events, 0);
    assert.equal(seen.report.checkpointRejected, undefined);
  },
);

postgresTest(
  "opening from a checkpoint, then appending, gives what a whole replay gives",
  async (url) => {
    const seen = await withPgStore(url, (store) =>
      Effect.gen(function* () {
        const first = yield* createWith(store, "same", 3100);
        const at = yield* store.checkpoint(first);
        yield* appendAll(store, first, events.slice(3100, 3400));
        yield* store.close(first);
        // A writer from the checkpoint at 3,400 (written on close) appends.
        const writer = yield* store.open("same", { mode: "write" });
        const resumed = writer.report.checkpoint;
        yield* appendAll(store, writer, events.slice(3400, 6000));
        const fromCheckpoint = writer.session;
        yield* store.close(writer);
        const whole = yield* store.open("same", { wholeLog: true });
        const reopened = yield* store.open("same");
        return {
          at,
          resumed,
          fromCheckpoint: shown(fromCheckpoint, 4000),
          reopened: {
            nextSeq: reopened.session.surface.nextSeq,
            messages: deriveMessages(reopened.session.surface),
            // Below what the session holds: read from the store.
            tail: yield* store.events(reopened, { fromSeq: 5000 }),
          },
          reopenedAt: reopened.report.checkpoint,
          whole: shown(whole.session, 4000),
          wholeTail: Result.getOrThrow(Session.events(whole.session, 5000)),
          wholeAt: whole.report.checkpoint,
        };
      }), policy);
    assert.equal(seen.at, 3100);
    assert.equal(seen.resumed, 3400);
    assert.equal(seen.wholeAt, undefined);
    assert.equal(seen.reopenedAt, 6000);
    assert.deepEqual(seen.fromCheckpoint, seen.whole);
    assert.deepEqual(seen.reopened.messages, seen.whole.messages);
    assert.equal(seen.reopened.nextSeq, seen.whole.nextSeq);
    assert.deepEqual(seen.reopened.tail, seen.wholeTail);
    assert.deepEqual(
      seen.whole.tail.map((event) => event.seq),
      Array.from({ length: 2000 }, (_, i) => 4000 + i),
    );
  },
);

/** Stores 3,000 events with a checkpoint at 3,000; returns its text. */
const stored = (url: string, id: string) =>
  withPgStore(url, (store) =>
    Effect.gen(function* () {
      const writer = yield* createWith(store, id, 3000);
      yield* store.checkpoint(writer);
      yield* store.close(writer);
    }), policy);

/** The open of `id` with its report and what a whole replay shows. */
const openBoth = (url: string, id: string) =>
  withPgStore(url, (store) =>
    Effect.gen(function* () {
      const reader = yield* store.open(id);
      const whole = yield* store.open(id, { wholeLog: true });
      return {
        report: reader.report,
        // The reader holds its surface only: the log comes from the store.
        session: {
          ...shown(reader.session, reader.session.surface.nextSeq),
          tail: yield* store.events(reader),
        },
        whole: shown(whole.session, 0),
      };
    }), policy);

/** A way to damage a stored session, and what its open must report. */
interface Damage {
  /** What it is. */
  readonly what: string;
  /** The session it damages (stored first). */
  readonly id: string;
  /** The damage, as SQL. */
  readonly damage: (url: string) => Promise<void>;
  /** The problem the open reports. */
  readonly problem: string;
  /** The next seq the open must end at. */
  readonly nextSeq: number;
}

const damages: ReadonlyArray<Damage> = [
  {
    what: "a corrupted (torn) checkpoint",
    id: "torn",
    damage: async (url) => {
      await querySql(
        url,
        "UPDATE palimpsest_checkpoints SET body = left(body, 200) WHERE session_id = 'torn'",
      );
    },
    problem: "unreadable",
    nextSeq: 3000,
  },
  {
    what: "another session's checkpoint",
    id: "mine",
    damage: async (url) => {
      await stored(url, "theirs");
      await querySql(
        url,
        `UPDATE palimpsest_checkpoints SET body =
           (SELECT body FROM palimpsest_checkpoints WHERE session_id = 'theirs')
         WHERE session_id = 'mine'`,
      );
    },
    problem: "foreign",
    nextSeq: 3000,
  },
  {
    // As a restore from an older backup of the events would leave it.
    what: "a log cut below the checkpoint's boundary",
    id: "cut",
    damage: async (url) => {
      await querySql(
        url,
        "DELETE FROM palimpsest_events WHERE session_id = 'cut' AND seq >= 2000",
      );
      await querySql(
        url,
        // By hand, as a writer would: under a lease (one run out already).
        "UPDATE palimpsest_sessions SET next_seq = 2000, writer_token = 'by-hand', lease_until = now() - interval '1 second' WHERE id = 'cut'",
      );
    },
    problem: "stale",
    nextSeq: 2000,
  },
  {
    what: "a log whose boundary event was rewritten",
    id: "rewritten",
    damage: async (url) => {
      const [row] = await querySql(
        url,
        "SELECT line FROM palimpsest_events WHERE session_id = 'rewritten' AND seq = 2999",
      );
      const event = JSON.parse(String(row?.line));
      event.time += 1;
      await querySql(
        url,
        "UPDATE palimpsest_events SET line = $1 WHERE session_id = 'rewritten' AND seq = 2999",
        [JSON.stringify(event)],
      );
    },
    problem: "stale",
    nextSeq: 3000,
  },
];

for (const { what, id, damage, problem, nextSeq } of damages) {
  postgresTest(
    `${what} is reported ${problem} and the open replays the whole log`,
    async (url) => {
      await stored(url, id);
      await damage(url);
      const seen = await openBoth(url, id);
      assert.equal(seen.report.checkpoint, undefined);
      assert.equal(seen.report.checkpointRejected?.problem, problem);
      assert.equal(seen.report.events, nextSeq);
      assert.equal(seen.session.nextSeq, nextSeq);
      assert.deepEqual(seen.session, seen.whole);
    },
  );
}

postgresTest(
  "with checkpoints off, none is written and none is read",
  async (url) => {
    await stored(url, "kept");
    const seen = await withPgStore(url, (store) =>
      Effect.gen(function* () {
        const writer = yield* createWith(store, "off", 2600);
        yield* store.close(writer);
        const reader = yield* store.open("kept");
        return { report: reader.report };
      }), { checkpoints: false });
    assert.equal(await checkpointSeq(url, "off"), undefined);
    assert.equal(seen.report.checkpoint, undefined);
    assert.equal(seen.report.checkpointRejected, undefined);
    assert.equal(seen.report.events, 3000);
  },
);

postgresTest(
  "a database of an earlier release gains the checkpoint table and keeps its sessions",
  async (url) => {
    await stored(url, "old");
    // As an earlier release left it: no checkpoint table, no record of it
    // nor of the migrations after it (the migrator runs only those past the
    // newest it recorded; the catalogue's columns are added again as is).
    await querySql(url, "DROP TABLE palimpsest_checkpoints");
    await querySql(
      url,
      "DELETE FROM palimpsest_migrations WHERE migration_id >= 2",
    );
    const seen = await withPgStore(url, (store) =>
      Effect.gen(function* () {
        const reader = yield* store.open("old");
        const writer = yield* store.open("old", { mode: "write" });
        yield* appendAll(store, writer, events.slice(3000, 3100));
        yield* store.close(writer);
        const again = yield* store.open("old");
        return {
          first: reader.report,
          nextSeq: again.session.surface.nextSeq,
          again: again.report.checkpoint,
        };
      }), policy);
    assert.equal(seen.first.events, 3000);
    assert.equal(seen.first.checkpoint, undefined);
    assert.equal(seen.nextSeq, 3100);
    assert.equal(seen.again, 3100);
  },
);
