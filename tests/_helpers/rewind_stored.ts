/**
 * A rewind through a store, the same program for every layer: a session of
 * two turns and a checkpoint, opened again holding only its surface
 * (`holdLogUpTo: 0`), rewound with `store.update`, then a third turn; the
 * checkpoint, written before the rewind, is then opened after it. What the
 * program returns compares across layers and against a whole replay.
 */
import assert from "node:assert/strict";
import { Effect, Result } from "effect";
import {
  type CheckpointPolicy,
  deriveMessages,
  Draft,
  type EventDraft,
  rewind,
  Session,
  SessionStore,
} from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";

/** The layer options that make an open hold only the surface. */
export const surfaceOnly: CheckpointPolicy = {
  holdLogUpTo: 0,
  onClose: false,
  everyEvents: 1_000_000,
};

/** Turn `n`: its start, a user message, an answer, its end. */
export const turnDrafts = (
  n: number,
  user: string,
  answer: string,
): EventDraft[] => [
  Draft.turnStart(n),
  Draft.user(user, { id: `u${n}` }),
  Draft.assistant({
    turn: n,
    step: 0,
    provider: "p",
    model: "m",
    content: answer,
    id: `a${n}`,
  }),
  Draft.turnEnd(n, { kind: "completed" }),
];

/**
 * Session `id` created in the store of the context with turns 0 (seqs 0-3)
 * and 1 (4-7); the store and the write handle.
 */
export const storeTwoTurns = (id: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const writer = yield* store.create({ id, createdAt: 0, isSeeded: false });
    yield* store.append(writer, [
      ...turnDrafts(0, "hi", "hello"),
      ...turnDrafts(1, "more", "sure"),
    ]);
    return { store, writer };
  });

/** What {@link rewindThroughStore} saw, comparable across layers. */
export interface StoredRewind {
  /** The first event the rewound handle's session held before the rewind. */
  readonly heldBefore: number;
  /** The nodes right after the rewind. */
  readonly rewound: ReadonlyArray<number>;
  /** The log, as stored, without times. */
  readonly log: ReadonlyArray<string>;
  /** The nodes of the session opened from the checkpoint. */
  readonly nodes: ReadonlyArray<number>;
}

/**
 * Runs the program on the store of the context (its layer configured with
 * {@link surfaceOnly}) and checks, on the way, that the open from the
 * checkpoint gives what a whole open and a whole replay give.
 */
export const rewindThroughStore = Effect.gen(function* () {
  const { store, writer } = yield* storeTwoTurns("r");
  yield* store.checkpoint(writer);
  yield* store.close(writer);
  const handle = yield* store.open("r", { mode: "write" });
  const heldBefore = Session.heldFrom(handle.session);
  const { session } = yield* store.update(
    handle,
    (s) => rewind(s, { to: 3, event: Draft.user("edited", { id: "e" }) }),
  );
  const rewound = surfaceNodes(session.surface);
  yield* store.append(handle, turnDrafts(2, "after", "fine"));
  yield* store.close(handle);
  const reader = yield* store.open("r", { mode: "read" });
  const whole = yield* store.open("r", { mode: "read", wholeLog: true });
  const events = yield* store.events(whole);
  const replayed = yield* Session.fromEvents(whole.session.header, events);
  for (const other of [whole.session, replayed]) {
    assert.deepEqual(
      surfaceNodes(reader.session.surface),
      surfaceNodes(other.surface),
    );
    assert.deepEqual(
      deriveMessages(reader.session.surface),
      deriveMessages(other.surface),
    );
  }
  const log = Result.getOrThrow(Session.encode(whole.session)).map((e) =>
    JSON.stringify(e).replace(/"time":\d+/, "")
  );
  return {
    heldBefore,
    rewound,
    log,
    nodes: surfaceNodes(reader.session.surface),
  } satisfies StoredRewind;
});

/** The outcome every layer must give. */
export const expectedStoredRewind = (seen: StoredRewind): void => {
  // Opened from the checkpoint: only the surface and the latest events.
  assert.ok(seen.heldBefore > 0);
  assert.deepEqual(seen.rewound, [1, 2, 8]);
  assert.deepEqual(seen.nodes, [1, 2, 8, 10, 11]);
  assert.equal(seen.log.length, 13);
};
