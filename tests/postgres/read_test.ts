/**
 * An open reads a stored session's rows as the file reader reads the same
 * lines: the same events, the same report, the same errors at the same
 * lines, strict and with `recover`, whatever the rows hold.
 */
import assert from "node:assert/strict";
import { Effect, Exit } from "effect";
import { Session, SessionStore } from "@palimpsest/session";
import {
  type LoadedLog,
  type ReadOptions,
  readSessionBytes,
} from "@palimpsest/session/jsonl";
import {
  layerPostgresStore,
  loadPostgresSession,
} from "@palimpsest/session/postgres";
import { postgresTest, querySql } from "../_helpers/postgres.ts";
import { workload } from "../_helpers/workload.ts";

const EVENTS = 3000;

/** Stores the standard workload's first EVENTS events as session `id`. */
const store = async (url: string, id: string): Promise<void> => {
  const { events } = workload({ events: EVENTS, lines: false });
  const session = await Effect.runPromise(
    Session.fromEvents({ id, createdAt: 1, isSeeded: false }, events),
  );
  await Effect.runPromise(
    Effect.scoped(SessionStore.use((s) => s.create(session))).pipe(
      Effect.provide(layerPostgresStore({ url })),
    ),
  );
};

/** What a read came to, comparable across readers. */
const outcome = (exit: Exit.Exit<LoadedLog, unknown>) =>
  Exit.isSuccess(exit)
    ? {
      events: exit.value.events,
      nextSeq: exit.value.session.surface.nextSeq,
      header: exit.value.session.header,
      report: exit.value.report,
    }
    : { failure: Exit.isFailure(exit) ? exit.cause : undefined };

/**
 * The session read from PostgreSQL, and the same rows read as a file's
 * bytes (header, then each row's line and `\n`).
 */
const bothReads = async (
  url: string,
  id: string,
  options: ReadOptions = {},
) => {
  const head = await querySql(
    url,
    "SELECT header, next_seq FROM palimpsest_sessions WHERE id = $1",
    [id],
  );
  const rows = await querySql(
    url,
    "SELECT line FROM palimpsest_events WHERE session_id = $1 AND seq < $2 ORDER BY seq",
    [id, head[0]?.next_seq],
  );
  const text = `${head[0]?.header}\n${
    rows.map((row) => `${row.line}\n`).join("")
  }`;
  const file = await Effect.runPromise(
    Effect.exit(readSessionBytes(new TextEncoder().encode(text), options)),
  );
  const stored = await Effect.runPromise(
    Effect.exit(loadPostgresSession(url, id, options)),
  );
  return { stored: outcome(stored), file: outcome(file) };
};

/** Replaces the line of event `seq`. */
const setLine = (url: string, id: string, seq: number, line: string) =>
  querySql(
    url,
    "UPDATE palimpsest_events SET line = $3 WHERE session_id = $1 AND seq = $2",
    [id, seq, line],
  );

const lineOf = async (url: string, id: string, seq: number) =>
  String(
    (await querySql(
      url,
      "SELECT line FROM palimpsest_events WHERE session_id = $1 AND seq = $2",
      [id, seq],
    ))[0]?.line,
  );

postgresTest("a whole session reads as its file reads", async (url) => {
  await store(url, "whole");
  const { stored, file } = await bothReads(url, "whole");
  assert.ok("events" in stored && stored.events.length === EVENTS);
  assert.deepEqual(stored, file);
});

/** A bad line put into a stored session, and where a read stops. */
interface BadLine {
  /** What it is. */
  readonly what: string;
  /** The session. */
  readonly id: string;
  /** The seq whose line is changed. */
  readonly seq: number;
  /** The bad line, from the good one. */
  readonly bad: (line: string) => string;
  /** The tag a recovering read stops at. */
  readonly tag: string;
  /** Reader options besides `recover`. */
  readonly options?: { readonly maxLineBytes: number };
}

const badLines: ReadonlyArray<BadLine> = [
  {
    what: "a line that is not JSON",
    id: "broken",
    seq: 2500,
    bad: () => '{"type":"turn/st',
    tag: "CorruptLine",
  },
  {
    // The event claims the seq after its own.
    what: "an event that breaks a fold rule",
    id: "unfolded",
    seq: 2803,
    bad: (line) => JSON.stringify({ ...JSON.parse(line), seq: 2804 }),
    tag: "FoldFailed",
  },
  {
    what: "a line past maxLineBytes",
    id: "long",
    seq: 1200,
    bad: (line) => {
      const event = JSON.parse(line);
      return JSON.stringify({
        ...event,
        data: { ...event.data, note: "é".repeat(3000) },
      });
    },
    tag: "LineTooLong",
    options: { maxLineBytes: 4096 },
  },
];

for (const { what, id, seq, bad, tag, options } of badLines) {
  postgresTest(
    `${what} stops the read at its line (${tag}), strict or recovering`,
    async (url) => {
      await store(url, id);
      await setLine(url, id, seq, bad(await lineOf(url, id, seq)));
      const strict = await bothReads(url, id, options);
      assert.ok("failure" in strict.stored);
      assert.deepEqual(strict.stored, strict.file);
      const recovered = await bothReads(url, id, { ...options, recover: true });
      assert.ok("report" in recovered.stored);
      assert.equal(recovered.stored.report.stoppedAt?._tag, tag);
      assert.equal(recovered.stored.report.stoppedAt?.line, seq + 2);
      assert.deepEqual(recovered.stored, recovered.file);
    },
  );
}

postgresTest("a line ending in \\r is read and counted", async (url) => {
  await store(url, "crlf");
  await setLine(url, "crlf", 10, `${await lineOf(url, "crlf", 10)}\r`);
  // The head row keeps the log's size, as an append would.
  await querySql(
    url,
    "UPDATE palimpsest_sessions SET bytes = bytes + 1 WHERE id = 'crlf'",
  );
  const { stored, file } = await bothReads(url, "crlf");
  assert.ok("report" in stored);
  assert.equal(stored.report.crlfLines, 1);
  assert.deepEqual(stored, file);
});

postgresTest(
  "a session of an older version is migrated as its file is",
  async (url) => {
    await store(url, "older");
    await querySql(
      url,
      "UPDATE palimpsest_sessions SET version = 2, header = $2 WHERE id = $1",
      [
        "older",
        '{"type":"session","version":2,"id":"older","createdAt":1,"isSeeded":false}',
      ],
    );
    const refused = await bothReads(url, "older");
    assert.ok("failure" in refused.stored);
    assert.deepEqual(refused.stored, refused.file);
    const migrate: ReadOptions["migrate"] = (input) =>
      Effect.succeed({
        header: { id: "older", createdAt: 1, isSeeded: false },
        events: input.lines,
      });
    const migrated = await bothReads(url, "older", { migrate });
    assert.ok("events" in migrated.stored);
    assert.equal(migrated.stored.events.length, EVENTS);
    assert.deepEqual(migrated.stored, migrated.file);
  },
);

postgresTest(
  "a read bound by holdLogUpTo keeps what the file reader keeps",
  async (url) => {
    await store(url, "lean");
    const whole = await bothReads(url, "lean", { holdLogUpTo: 100 });
    assert.ok("events" in whole.stored);
    assert.ok(whole.stored.events.length < EVENTS);
    assert.deepEqual(whole.stored, whole.file);
    // A fold error after events were let go: the same line.
    const line = await lineOf(url, "lean", 2803);
    const event = JSON.parse(line);
    event.seq = 2804;
    await setLine(url, "lean", 2803, JSON.stringify(event));
    const stopped = await bothReads(url, "lean", {
      holdLogUpTo: 100,
      recover: true,
    });
    assert.ok("report" in stopped.stored);
    assert.equal(stopped.stored.report.stoppedAt?._tag, "FoldFailed");
    assert.equal(stopped.stored.report.stoppedAt?.line, 2805);
    assert.deepEqual(stopped.stored, stopped.file);
  },
);
