/**
 * Checkpoints as values: for generated logs (appends, replaces, tool
 * results, prunes, system prompts, log-only and opaque events, windows;
 * turns and steps, compactions and prunes through the history operations),
 * restoring a checkpoint taken after any prefix and folding the rest gives
 * what folding the whole log gives: the surface, the messages, the held
 * events, the open work, the turn marks, and the same outcome (or the same
 * error) for any further replace. A checkpoint references the log's lines
 * (by seq, and for a file by offset and length) and restores only what
 * they decode to. A checkpoint checked against the wrong log, or damaged,
 * or referencing lines the log does not hold there, is refused with its
 * problem.
 *
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { createHash } from "node:crypto";
import { Effect, Result, Schema } from "effect";
import {
  Draft,
  extensionType,
  fork,
  makeVocabulary,
  openWork,
  Session,
  type SessionEvent,
  SessionSeq,
  type SurfaceEvent,
} from "@palimpsest/session";
import { encodeEventLine, readSessionFile } from "@palimpsest/session/jsonl";
import { catalogMigration } from "@palimpsest/session/migrations";
import {
  type CheckpointCandidate,
  decodeCheckpoint,
  encodeCheckpoint,
  readsOfCheckpoint,
  type ReferencedEvents,
  restoreCheckpoint,
  type StoredLines,
} from "../../src/log/checkpoint.ts";
import { decodeReferencedLine, makeRunBudget } from "../../src/log/line.ts";
import { restoreSurface } from "../../src/surface/restore.ts";
import { logEvent, surfaceNodes } from "@palimpsest/session/internal";
import { turnMarks } from "../../src/session/prior.ts";
import { logArb } from "../_helpers/log_gen.ts";
import { historySessionArb } from "../_helpers/session_gen.ts";
import { decoded, text } from "../_helpers/build.ts";
import { assertSameFold } from "../_helpers/checkpoints.ts";

const header = { id: "cp", createdAt: 0, isSeeded: false } as const;

/** The stored line of `seq` in `log`, without `\n`. */
const lineOf = (log: Session, seq: number): string => {
  const event = logEvent(log.surface, SessionSeq.make(seq));
  assert.ok(event !== undefined, `the log holds ${seq}`);
  return encodeEventLine(
    event,
    log.vocabulary && { vocabulary: log.vocabulary },
  )
    .slice(0, -1);
};

/** The lines a candidate references, read from `log` (a whole session). */
const referenced = (
  log: Session,
  candidate: CheckpointCandidate,
): ReferencedEvents | undefined => {
  const reads = readsOfCheckpoint(candidate);
  const runs = makeRunBudget();
  const at = (seq: number) =>
    decodeReferencedLine(lineOf(log, seq), seq, runs, log.vocabulary);
  const pinned = reads.pinned.map(at);
  const held = [];
  for (let seq = reads.heldFrom; seq < candidate.seq; seq++) held.push(at(seq));
  return pinned.includes(undefined) || held.includes(undefined) ? undefined : {
    pinned: pinned as SessionEvent[],
    held: held as SessionEvent[],
  };
};

/** Where the lines of `log` would be in a file, the header `header` bytes long. */
const fileLines = (log: Session, headerBytes = 40): StoredLines => {
  const starts = new Map<number, number>();
  const lengths = new Map<number, number>();
  let at = headerBytes;
  for (let seq = log.surface.baseSeq; seq < log.surface.nextSeq; seq++) {
    const length = new TextEncoder().encode(lineOf(log, seq)).length + 1;
    starts.set(seq, at);
    lengths.set(seq, length);
    at += length;
  }
  return {
    bytes: at,
    start: (seq) => starts.get(seq),
    length: (seq) => lengths.get(seq),
  };
};

/**
 * Checkpoints `prefix` and restores it against its own boundary and lines;
 * `log`, the whole log it is a prefix of, when `prefix` does not hold it.
 */
const roundTrip = (prefix: Session, log: Session = prefix): Session => {
  const record = encodeCheckpoint(prefix, {
    last: logEvent(log.surface, SessionSeq.make(prefix.surface.nextSeq - 1)),
  });
  assert.ok(record !== undefined, "a non-empty prefix has a checkpoint");
  const candidate = Result.getOrThrow(decodeCheckpoint(record.text));
  assert.equal(candidate.seq, prefix.surface.nextSeq);
  const restored = restoreCheckpoint(
    candidate,
    {
      header: prefix.header,
      lastLine: lineOf(log, prefix.surface.nextSeq - 1),
    },
    referenced(log, candidate),
    prefix.vocabulary,
  );
  if (Result.isFailure(restored)) {
    assert.fail(`restore refused: ${restored.failure.detail}`);
  }
  return restored.success;
};

const assertSame = assertSameFold;

Deno.test("a checkpoint after any prefix of a generated log, then the rest, is the whole log's fold", () => {
  fc.assert(
    fc.property(
      logArb(60),
      fc.nat(),
      fc.array(fc.nat(), { maxLength: 12 }),
      (log, cut, probes) => {
        const events = log.lines.map((raw) => decoded(raw));
        if (events.length === 0) return;
        const options = { baseSeq: SessionSeq.make(log.base) };
        const full = Effect.runSync(
          Session.fromEvents(header, events, options),
        );
        const k = 1 + (cut % events.length);
        const prefix = Effect.runSync(
          Session.fromEvents(header, events.slice(0, k), options),
        );
        const restored = roundTrip(prefix);
        assertSame(restored, prefix, probes);
        const rest = Effect.runSync(
          Session.appendEvents(restored, events.slice(k)),
        );
        assertSame(rest, full, probes);
        // A checkpoint of a restored session, restored again.
        assertSame(roundTrip(rest, full), full, probes);
        // For a file: each node before the held ones by its line's offset
        // and length, the held ones from the first one's offset.
        const file = fileLines(prefix);
        const record = encodeCheckpoint(prefix, { lines: file });
        assert.ok(record !== undefined);
        const reads = readsOfCheckpoint(
          Result.getOrThrow(decodeCheckpoint(record.text)),
        );
        assert.deepEqual(reads.offsets, reads.pinned.map(file.start));
        assert.deepEqual(reads.lengths, reads.pinned.map(file.length));
        assert.equal(
          reads.heldBytes,
          reads.heldFrom === prefix.surface.nextSeq
            ? file.bytes
            : file.start(reads.heldFrom),
        );
        // A few bytes a node, whatever the events hold.
        assert.ok(
          record.text.length <= 600 + 24 * surfaceNodes(prefix.surface).length,
        );
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("a checkpoint inside turns, compactions and prunes, then the rest, is the whole session's fold", () => {
  fc.assert(
    fc.property(
      historySessionArb,
      fc.nat(),
      fc.array(fc.nat(), { maxLength: 8 }),
      (session, cut, probes) => {
        const events = Result.getOrThrow(Session.events(session));
        if (events.length === 0) return;
        const k = 1 + (cut % events.length);
        const prefix = Effect.runSync(
          Session.fromEvents(session.header, events.slice(0, k)),
        );
        const restored = roundTrip(prefix);
        // The restored session holds every open turn and compaction whole.
        for (
          const turn of openWork(Result.getOrThrow(Session.events(prefix)))
            .turns
        ) {
          assert.ok(Session.heldFrom(restored) <= turn.startSeq);
        }
        const rest = Effect.runSync(
          Session.appendEvents(restored, events.slice(k)),
        );
        assertSame(rest, session, probes);
      },
    ),
    { numRuns: 100 },
  );
});

/** A `turn/start` of `turn` at `seq` (time 0), or its completed `turn/end`. */
const turnEvent = (
  kind: "start" | "end",
  seq: number,
  turn: number,
): SessionEvent =>
  decoded({
    type: `turn/${kind}`,
    seq,
    time: 0,
    data: kind === "start" ? { turn } : { turn, reason: { kind: "completed" } },
  });

Deno.test("a session opened from a checkpoint refuses to hand out events it does not hold", () => {
  const events = [0, 1, 2, 3].map((seq) => turnEvent("start", seq, seq))
    .concat([4, 5].map((seq) => turnEvent("end", seq, 7 - seq)));
  const prefix = Effect.runSync(Session.fromEvents(header, events));
  const restored = roundTrip(prefix);
  // Turns 0 and 1 are still open: held from the first one's start.
  assert.equal(Session.heldFrom(restored), 0);
  const closed = Effect.runSync(Session.fromEvents(
    header,
    events.slice(0, 1).concat([turnEvent("end", 1, 0)]),
  ));
  const after = roundTrip(closed);
  assert.equal(Session.heldFrom(after), 2);
  assert.deepEqual(Result.getOrThrow(Session.events(after, 2)), []);
  const all = Session.events(after);
  assert.ok(Result.isFailure(all));
  assert.equal(all.failure._tag, "EventsNotHeld");
  const first = Session.eventAt(after, 0);
  assert.ok(Result.isFailure(first));
  const miss = first.failure;
  assert.ok(miss._tag === "EventsNotHeld");
  assert.deepEqual([miss.fromSeq, miss.heldFrom], [0, 2]);
  assert.match(miss.message, /holds its events from seq 2 on/);
  const encoded = Session.encode(after);
  assert.ok(Result.isFailure(encoded));
  assert.equal(encoded.failure._tag, "EventsNotHeld");
  assert.deepEqual(turnMarks(after), {
    lastTurn: 0,
    turnStep: { turn: 0, step: 0 },
  });
});

Deno.test("a checkpoint is refused when damaged, foreign or stale", () => {
  const make = (id: string, texts: ReadonlyArray<string>) =>
    Effect.runSync(Session.fromEvents(
      { ...header, id },
      texts.map((t, seq) =>
        decoded({
          type: "user/message",
          seq,
          time: 0,
          surfaceOp: "append",
          data: {
            id: `u${seq}`,
            role: "user",
            content: text(t),
            source: { kind: "user" },
          },
        })
      ),
    ));
  const session = make("a", ["one", "two", "three"]);
  const record = encodeCheckpoint(session);
  assert.ok(record !== undefined);
  const last = Result.getOrThrow(Session.eventAt(session, 2))!;
  const boundary = {
    header: session.header,
    lastLine: encodeEventLine(last).slice(0, -1),
  };
  const problem = (text: string, b = boundary, log = session): string => {
    const candidate = decodeCheckpoint(text);
    if (Result.isFailure(candidate)) return candidate.failure.problem;
    const restored = restoreCheckpoint(
      candidate.success,
      b,
      referenced(log, candidate.success),
      undefined,
    );
    return Result.isFailure(restored) ? restored.failure.problem : "used";
  };
  assert.equal(problem(record.text), "used");
  // Corrupted: one character of the body changed.
  assert.equal(
    problem(record.text.replace('"seq":3', '"seq":4')),
    "unreadable",
  );
  // A checkpoint of the previous version, or with another number in its
  // version field: not read, whatever it holds.
  const reversioned = (version: number) => {
    const json = record.text.slice(65, -1).replace(
      '"checkpoint":3',
      `"checkpoint":${version}`,
    );
    return `${createHash("sha256").update(json).digest("hex")}\n${json}\n`;
  };
  assert.equal(problem(reversioned(2)), "unreadable");
  assert.equal(problem(reversioned(4)), "unreadable");
  // A checkpoint that names a node twice (its order rehashed): invalid,
  // whether the node is pinned or held.
  const json = record.text.slice(65, -1);
  assert.ok(json.includes('"order":[0,1,1]'), json);
  const twice = json.replace('"order":[0,1,1]', '"order":[0,1,0]');
  assert.equal(
    problem(`${createHash("sha256").update(twice).digest("hex")}\n${twice}\n`),
    "invalid",
  );
  const events = [0, 1, 2].map((seq) =>
    Result.getOrThrow(Session.eventAt(session, seq))!
  );
  const nodes = [events[0]!, events[1]!, events[1]!] as SurfaceEvent[];
  const seqs = [0, 3, 3].map((s) => SessionSeq.make(s));
  assert.equal(
    restoreSurface([seqs[0]!, seqs[1]!, seqs[2]!, 0], nodes, [], undefined),
    undefined,
  );
  assert.equal(
    restoreSurface([seqs[0]!, seqs[0]!, seqs[2]!, 0], nodes, events, undefined),
    undefined,
  );
  // The log holds other events where it references its nodes: a log whose
  // first events differ, with the same boundary event.
  const other3 = make("a", ["uno", "dos", "three"]);
  assert.equal(problem(record.text, boundary, other3), "used");
  assert.equal(
    restoreCheckpoint(
      Result.getOrThrow(decodeCheckpoint(record.text)),
      boundary,
      undefined,
      undefined,
    ).pipe(
      Result.match({ onSuccess: () => "used", onFailure: (f) => f.problem }),
    ),
    "stale",
  );
  // Truncated, as a torn write would leave it.
  assert.equal(
    problem(record.text.slice(0, record.text.length / 2)),
    "unreadable",
  );
  assert.equal(problem(""), "unreadable");
  // Foreign: another session's checkpoint, or the same id created again.
  const other = make("b", ["one", "two", "three"]);
  assert.equal(problem(encodeCheckpoint(other)!.text), "foreign");
  assert.equal(
    problem(record.text, {
      ...boundary,
      header: { ...header, id: "a", createdAt: 5 },
    }),
    "foreign",
  );
  // Stale: the log holds another event at the boundary.
  const rewritten = make("a", ["one", "two", "four"]);
  assert.equal(
    problem(record.text, {
      header: session.header,
      lastLine: encodeEventLine(
        Result.getOrThrow(Session.eventAt(rewritten, 2))!,
      ).slice(0, -1),
    }),
    "stale",
  );
  assert.equal(problem(record.text, { ...boundary, lastLine: "{" }), "stale");
});

Deno.test("a checkpoint of an empty log, or of nothing new, is not written", () => {
  const empty = Session.make(header);
  assert.equal(encodeCheckpoint(empty), undefined);
  const one = Effect.runSync(Session.fromEvents(header, [
    turnEvent("start", 0, 0),
    turnEvent("end", 1, 0),
  ]));
  const restored = roundTrip(one);
  // It holds neither its last event nor a node: the writer reads the last
  // event through the store.
  assert.equal(Session.heldFrom(restored), 2);
  assert.equal(encodeCheckpoint(restored), undefined);
  const again = encodeCheckpoint(restored, {
    last: Result.getOrThrow(Session.eventAt(one, 1)),
  });
  assert.equal(again?.text, encodeCheckpoint(one)?.text);
});

Deno.test("checkpoints of migrated v0–v2 logs, forks and extension events give the whole fold", async () => {
  const restoredAll = (session: Session): number => {
    const events = Result.getOrThrow(Session.events(session));
    for (let k = 1; k <= events.length; k++) {
      const prefix = Effect.runSync(
        Session.fromEvents(session.header, events.slice(0, k), {
          ...(session.vocabulary === undefined
            ? {}
            : { vocabulary: session.vocabulary }),
          baseSeq: session.surface.baseSeq,
          stored: true,
        }),
      );
      const rest = Effect.runSync(
        Session.appendEvents(roundTrip(prefix), events.slice(k), {
          stored: true,
        }),
      );
      assertSame(rest, session, [k, 1, 2 * k, 3]);
    }
    return events.length;
  };
  // Every migratable fixture of the older formats.
  const migrated = new Set<string>();
  for (const version of ["v0", "v1", "v2"]) {
    const folder = new URL(`../fixtures/${version}/`, import.meta.url);
    for (const entry of Deno.readDirSync(folder)) {
      if (!entry.name.endsWith(".jsonl") || entry.name.includes(".expected")) {
        continue;
      }
      const read = await Effect.runPromise(Effect.result(
        readSessionFile(new URL(entry.name, folder).pathname, {
          migrate: catalogMigration,
        }),
      ));
      if (Result.isFailure(read)) continue;
      restoredAll(read.success.session);
      migrated.add(version);
    }
  }
  assert.deepEqual([...migrated], ["v0", "v1", "v2"]);
  // A fork: a seeded log.
  fc.assert(
    fc.property(historySessionArb, fc.nat(), (session, at) => {
      const n = session.surface.nextSeq;
      if (n === 0) return;
      const child = Effect.runSync(
        fork(session, SessionSeq.make(at % n), { id: "child" }),
      );
      restoredAll(child);
    }),
    { numRuns: 15 },
  );
  // Extension events, through the session's vocabulary.
  const vocabulary = makeVocabulary({
    "harness/mark": Schema.Struct({ label: Schema.String }),
  });
  const session = Effect.runSync(Session.appendAll(
    Session.make(header, { vocabulary }),
    [
      Draft.user("a"),
      { type: extensionType("harness/mark"), data: { label: "one" } },
      Draft.user("b"),
      { type: extensionType("harness/mark"), data: { label: "two" } },
    ],
  ));
  assert.equal(restoredAll(session), 4);
});

Deno.test("a checkpoint holds from the oldest node with an unanswered call, so the restored surface refuses a compaction over it", () => {
  const session = Effect.runSync(
    Session.fromEvents(
      header,
      [
        Draft.turnStart(0),
        Draft.user("list the files", { id: "u" }),
        Draft.turnEnd(0, { kind: "completed" }),
        Draft.turnStart(1),
        Draft.user("go on", { id: "v" }),
        Draft.turnEnd(1, { kind: "completed" }),
      ].map((d, seq) => decoded({ ...d, seq, time: 0 })),
    ),
  );
  // An assistant message whose call never got a result, in a closed turn.
  const withCall = Effect.runSync(
    Session.appendAll(session, [
      {
        type: "assistant/message",
        surfaceOp: "append",
        data: {
          turn: 1,
          step: 0,
          stream: [],
          message: {
            id: "a",
            role: "assistant",
            content: [{
              type: "tool-call",
              id: "c1",
              name: "ls",
              arguments: "{}",
            }],
            source: { kind: "model", provider: "p", model: "m" },
          },
        },
      },
      Draft.turnStart(2),
      Draft.user("more", { id: "w" }),
    ]),
  );
  const restored = roundTrip(withCall);
  assert.equal(Session.heldFrom(restored), 6);
  const over = {
    type: "user/message" as const,
    surfaceOp: {
      op: "replace" as const,
      startSeq: SessionSeq.make(4),
      endSeq: SessionSeq.make(6),
    },
    sourceEventSeqs: [4, 6].map((n) => SessionSeq.make(n)),
    data: {
      id: "s",
      role: "user" as const,
      content: [],
      source: { kind: "plugin", plugin: "compaction" },
    },
  };
  for (const s of [withCall, restored]) {
    const exit = Effect.runSyncExit(Effect.flip(Session.append(s, over)));
    assert.equal(
      exit._tag === "Success" && exit.value._tag,
      "ReplaceShadowsUnansweredCall",
    );
  }
});
