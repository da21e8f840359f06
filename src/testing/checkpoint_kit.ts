/**
 * What the checkpoint conformance suite needs besides a store: generated
 * sessions (turns of a user message and steps of an assistant message with
 * 0..2 tool calls, each answered, under compactions, prunes and later
 * appends), drawn from a seeded PRNG so that a failure names the seed that
 * reproduces it; and what "the same session" means for a session restored
 * from a checkpoint against a whole replay of the same log.
 *
 * @internal
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import * as Effect from "effect/Effect";
import type * as Layer from "effect/Layer";
import * as ManagedRuntime from "effect/ManagedRuntime";
import type * as Scope from "effect/Scope";
import * as Result from "effect/Result";
import { decodeEventResult } from "../core/decode.ts";
import { deriveMessages } from "../session/derive.ts";
import { Draft } from "../session/drafts.ts";
import type { SessionEvent } from "../core/event.ts";
import { compact } from "../history/compact.ts";
import { pruneToolResult } from "../history/prune.ts";
import { selectCompactableRange } from "../history/select.ts";
import { encodeEventLine } from "../log/codec.ts";
import type { ContentBlock } from "../core/message.ts";
import { heldEvents, turnMarks } from "../session/prior.ts";
import { interruptedTurnClosers, openWork } from "../session/repair.ts";
import { type EventDraft, Session } from "../session/session.ts";
import { surfaceEvent, surfaceNodes } from "../surface/surface.ts";
import type { CheckpointOptions } from "../store/checkpoints.ts";
import {
  type CreateError,
  type SessionHandle,
  SessionStore,
  type WriteError,
} from "../store/store.ts";
import type { SurfaceError } from "../core/errors.ts";
import {
  assistantMessageDraft,
  mulberry32,
  toolResultMessageDraft,
} from "./conformance_kit.ts";

/** A source of numbers uniform in [0, 1). */
export type Random = () => number;

/** An integer in `min..max`. */
export const int = (random: Random, min: number, max: number): number =>
  min + Math.floor(random() * (max - min + 1));

/** A natural number, at most `max`. */
export const nat = (random: Random, max = 1_000_000): number =>
  int(random, 0, max);

/** `min..max` natural numbers. */
export const nats = (random: Random, min: number, max: number): number[] =>
  Array.from({ length: int(random, min, max) }, () => nat(random));

/** Printable ASCII, `0..max` characters (fast-check's default strings). */
const ascii = (random: Random, min: number, max: number): string =>
  String.fromCharCode(
    ...Array.from(
      { length: int(random, min, max) },
      () => int(random, 32, 126),
    ),
  );

const oneOf = <A>(random: Random, values: ReadonlyArray<A>): A => {
  const value = values[int(random, 0, values.length - 1)];
  if (value === undefined) throw new Error(`Expected a non-empty list`);
  return value;
};

/** A generated tool call and its result. */
export interface GenCall {
  readonly name: string;
  readonly result: string;
  readonly isError: boolean;
}

/** A generated step: assistant text (maybe empty) and its calls. */
export interface GenStep {
  readonly text: string;
  readonly calls: ReadonlyArray<GenCall>;
}

/** A generated turn: a user message, then steps. */
export interface GenTurn {
  readonly user: string;
  readonly steps: ReadonlyArray<GenStep>;
}

/** A generated session plan: a system prompt maybe, then turns. */
export interface GenPlan {
  readonly system: string | undefined;
  readonly turns: ReadonlyArray<GenTurn>;
}

const times = <A>(random: Random, min: number, max: number, f: () => A): A[] =>
  Array.from({ length: int(random, min, max) }, f);

/** A plan of up to five turns; tool results are sometimes long. */
const plan = (random: Random): GenPlan => ({
  system: random() < 0.5 ? undefined : ascii(random, 0, 12),
  turns: times(random, 0, 5, () => ({
    user: ascii(random, 0, 12),
    steps: times(random, 1, 3, () => ({
      text: random() < 0.5 ? "" : ascii(random, 0, 12),
      calls: times(random, 0, 2, () => ({
        name: oneOf(random, ["read", "grep", "run"]),
        result: random() < 0.5
          ? ascii(random, 0, 12)
          : ascii(random, 1, 4).repeat(int(random, 50, 400)),
        isError: random() < 0.5,
      })),
    })),
  })),
});

const text = (value: string): ContentBlock[] =>
  value === "" ? [] : [{ type: "text", text: value }];

/** The drafts of a plan, in log order. */
export const planDrafts = (p: GenPlan, prefix = ""): EventDraft[] => {
  const drafts: EventDraft[] = [];
  if (p.system !== undefined) {
    drafts.push(Draft.system(p.system, { id: "system" }));
  }
  p.turns.forEach((t, turn) => {
    drafts.push(Draft.turnStart(turn));
    drafts.push(Draft.user(t.user, { id: `${prefix}u${turn}` }));
    t.steps.forEach((s, step) => {
      const callId = (k: number) => `${prefix}c${turn}.${step}.${k}`;
      drafts.push(Draft.stepStart(turn, step));
      drafts.push(
        assistantMessageDraft(turn, step, `${prefix}a${turn}.${step}`, [
          ...text(s.text),
          ...s.calls.map((c, k) => ({
            type: "tool-call" as const,
            id: callId(k),
            name: c.name,
            arguments: "{}",
          })),
        ], { kind: "model", provider: "p", model: "m" }),
      );
      s.calls.forEach((c, k) => {
        drafts.push(Draft.toolCall({
          turn,
          step,
          callId: callId(k),
          name: c.name,
          arguments: "{}",
        }));
        drafts.push(toolResultMessageDraft(turn, step, `r${callId(k)}`, {
          type: "tool-result",
          toolCallId: callId(k),
          content: c.result === "" ? [] : [{ type: "text", text: c.result }],
          ...(c.isError ? { isError: true } : {}),
        }, {
          ...(c.isError ? { error: { name: "Failed", code: "E" } } : {}),
          meta: { k },
        }));
      });
      drafts.push(Draft.stepEnd(turn, step));
    });
    drafts.push(Draft.turnEnd(turn, "completed"));
  });
  return drafts;
};

/** One history operation: compact keeping `n % 6` nodes, prune, append. */
export type HistoryOp = readonly ["compact" | "prune" | "append", number];

/**
 * Applies history operations to a session: a compaction of the range
 * `selectCompactableRange` picks keeping `n % 6` nodes, a prune of the
 * `n`-th current tool result, or an append of more generated turns.
 */
export const applyHistory = (
  session: Session,
  ops: ReadonlyArray<HistoryOp>,
  more: ReadonlyArray<GenPlan> = [],
): Session => {
  let current = session;
  ops.forEach(([kind, n], k) => {
    if (kind === "compact") {
      const range = selectCompactableRange(current.surface, {
        keepLast: n % 6,
      });
      if (range === undefined) return;
      current = Effect.runSync(compact(current, {
        ...range,
        summary: `summary ${k}`,
        compactionId: `h${k}`,
      }));
    } else if (kind === "prune") {
      const results = surfaceNodes(current.surface).filter((seq) =>
        surfaceEvent(current.surface, seq)?.type === "tool/result"
      );
      const seq = results[n % Math.max(1, results.length)];
      if (seq === undefined) return;
      current = Effect.runSync(pruneToolResult(current, seq, [
        { type: "text", text: `pruned ${k}` },
      ]));
    } else {
      const next = more[n % Math.max(1, more.length)];
      if (next === undefined) return;
      current = Effect.runSync(Session.appendAll(
        current,
        planDrafts({ ...next, system: undefined }, `m${k}.`),
      ));
    }
  });
  return current;
};

/** A fresh session with the plan's events appended. */
export const planSession = (p: GenPlan, id = "gen"): Session =>
  Effect.runSync(
    Session.appendAll(
      Session.make({ id, createdAt: 0, isSeeded: false }),
      planDrafts(p),
    ),
  );

/** A generated session under generated history operations. */
export const historySession = (random: Random): Session => {
  const base = plan(random);
  const ops = times(random, 0, 6, (): HistoryOp => [
    oneOf(random, ["compact", "prune", "append"] as const),
    nat(random),
  ]);
  const more = times(random, 0, 2, () => plan(random));
  return applyHistory(planSession(base), ops, more);
};

/**
 * Runs `check` on `runs` samples, each drawn from its own seeded PRNG; a
 * failure names the seed and the sample that reproduce it.
 */
export const forSamples = async <A>(
  runs: number,
  seed: number,
  sample: (random: Random) => A,
  check: (value: A) => Promise<void>,
): Promise<void> => {
  for (let i = 0; i < runs; i++) {
    const value = sample(mulberry32(seed * 7919 + i));
    try {
      await check(value);
    } catch (cause) {
      throw new Error(`Failed on sample ${i} of seed ${seed}`, { cause });
    }
  }
};

/**
 * {@link forSamples} over generated histories ({@link historySession}) that
 * hold events: `check` gets each session, its events, and what `sample`
 * drew after it.
 */
export const forHistories = <A>(
  runs: number,
  seed: number,
  sample: (random: Random) => A,
  check: (
    session: Session,
    events: ReadonlyArray<SessionEvent>,
    value: A,
  ) => Promise<void>,
): Promise<void> =>
  forSamples(
    runs,
    seed,
    (random) => ({ session: historySession(random), value: sample(random) }),
    async ({ session, value }) => {
      const events = Result.getOrThrow(Session.events(session));
      if (events.length > 0) await check(session, events, value);
    },
  );

/** A valid event from its stored form; throws on a wrong one. */
export const decoded = (raw: unknown): SessionEvent =>
  Result.getOrThrow(decodeEventResult(raw));

/** Events as their stored lines. */
export const lines = (events: ReadonlyArray<SessionEvent>): string[] =>
  events.map((e) => encodeEventLine(e));

/**
 * Asserts that `restored` and `whole` have the same surface, messages,
 * held events (those `restored` holds) and open work.
 */
export const assertSameSession = (restored: Session, whole: Session): void => {
  assert.equal(restored.surface.nextSeq, whole.surface.nextSeq);
  assert.deepEqual(surfaceNodes(restored.surface), surfaceNodes(whole.surface));
  assert.equal(restored.surface.replacements, whole.surface.replacements);
  assert.deepEqual(
    deriveMessages(restored.surface),
    deriveMessages(whole.surface),
  );
  const from = Session.heldFrom(restored);
  assert.deepEqual(
    lines(Result.getOrThrow(Session.events(restored, from))),
    lines(Result.getOrThrow(Session.events(whole, from))),
  );
  assert.deepEqual(
    openWork(Result.getOrThrow(Session.events(restored, from))),
    openWork(Result.getOrThrow(Session.events(whole))),
  );
};

/** Outcome of folding one event: the nodes after it, or the error's cause. */
const outcome = (session: Session, event: SessionEvent): unknown => {
  const exit = Effect.runSyncExit(Session.appendEvents(session, [event]));
  return exit._tag === "Success"
    ? surfaceNodes(exit.value.surface)
    : JSON.stringify(exit.cause);
};

/** A replace of `a..b` by a user message citing `cites`. */
const replaceEvent = (
  seq: number,
  a: number,
  b: number,
  cites: ReadonlyArray<number>,
): SessionEvent =>
  decoded({
    type: "user/message",
    seq,
    time: 0,
    surfaceOp: { op: "replace", startSeq: a, endSeq: b },
    sourceEventSeqs: [...cites],
    data: {
      id: `r${seq}`,
      role: "user",
      content: text("summary"),
      source: { kind: "user" },
    },
  });

/**
 * Asserts that `restored` (restored from a checkpoint, or read holding only
 * its surface) folds as `full` does: {@link assertSameSession}, every node
 * held, the same turn marks and repair closers, and the same outcome of
 * replaces chosen by `probes` and of a replace of each of the first nodes.
 */
export const assertSameFold = (
  restored: Session,
  full: Session,
  probes: ReadonlyArray<number>,
): void => {
  assertSameSession(restored, full);
  for (const seq of surfaceNodes(full.surface)) {
    assert.equal(
      surfaceEvent(restored.surface, seq) !== undefined,
      true,
      `node ${seq} is held`,
    );
  }
  assert.deepEqual(turnMarks(restored), turnMarks(full));
  // Repair closes the same work with the same events.
  assert.deepEqual(
    lines(
      interruptedTurnClosers(heldEvents(restored), {
        surface: restored.surface,
      }),
    ),
    lines(interruptedTurnClosers(Result.getOrThrow(Session.events(full)))),
  );
  // Any further replace, valid or not, ends the same way on both.
  const next = full.surface.nextSeq;
  const nodes = surfaceNodes(full.surface);
  for (let i = 0; i + 1 < probes.length; i += 2) {
    const first = probes[i] ?? 0;
    const a = first % next;
    const b = (probes[i + 1] ?? 0) % next;
    const between = nodes.filter((n) => n >= Math.min(a, b));
    const cites = first % 3 === 0 || between.length === 0
      ? [Math.max(0, a - 1)]
      : between;
    const event = replaceEvent(next, a, b, cites);
    assert.deepEqual(outcome(restored, event), outcome(full, event));
  }
  // A replace of each node's own range, citing it (exercises the pinned
  // nodes, the head's protection and tool-result rules).
  for (const n of nodes.slice(0, 8)) {
    const event = replaceEvent(next, n, n, [n]);
    assert.deepEqual(outcome(restored, event), outcome(full, event));
  }
};

/** A store with a checkpoint policy, and a way to its checkpoint texts. */
export interface CheckpointStore {
  /** The store's layer; every build reaches the same storage. */
  readonly layer: Layer.Layer<SessionStore, unknown>;
  /** The stored checkpoint text of a session, if any. */
  readonly get: (id: string) => Promise<string | undefined>;
  /** Replaces a session's checkpoint text. */
  readonly set: (id: string, text: string) => Promise<void>;
}

/** Splits `events` into batches of 1..4, the way a harness appends. */
export const batches = (
  events: ReadonlyArray<SessionEvent>,
  sizes: ReadonlyArray<number>,
): SessionEvent[][] => {
  const out: SessionEvent[][] = [];
  let at = 0;
  for (let i = 0; at < events.length; i++) {
    const n = 1 + ((sizes[i % Math.max(1, sizes.length)] ?? 0) % 4);
    out.push(events.slice(at, at + n));
    at += n;
  }
  return out;
};

/** `text` with the character at `at` changed. */
export const flip = (text: string, at: number): string =>
  `${text.slice(0, at)}${text[at] === "a" ? "b" : "a"}${text.slice(at + 1)}`;

/** Checkpoints only when a test asks for one. */
export const manual: CheckpointOptions = {
  everyEvents: Number.MAX_SAFE_INTEGER,
  onClose: false,
};

export const run = async <A, E>(
  store: CheckpointStore,
  program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<A> => {
  const runtime = ManagedRuntime.make(store.layer);
  try {
    return await runtime.runPromise(Effect.scoped(program));
  } finally {
    await runtime.dispose();
  }
};
export const use = <A, E>(
  made: CheckpointStore,
  f: (store: SessionStore) => Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<A> =>
  run(
    made,
    Effect.gen(function* () {
      return yield* f(yield* SessionStore);
    }),
  );
/** Creates session `header.id` and appends `events` in one batch. */
export const storeEvents = (
  store: SessionStore,
  header: Session["header"],
  events: ReadonlyArray<SessionEvent>,
): Effect.Effect<void, CreateError | SurfaceError | WriteError> =>
  Effect.scoped(Effect.gen(function* () {
    const writer = yield* store.create(header);
    yield* store.appendEvents(writer, events);
  }));
/** Stores `events` as `id` in batches, with a checkpoint after `cut`. */
export const seed = (
  id: string,
  header: Session["header"],
  events: ReadonlyArray<SessionEvent>,
  cut: number,
  sizes: ReadonlyArray<number> = [0],
): Effect.Effect<void, unknown, SessionStore> =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    yield* Effect.scoped(Effect.gen(function* () {
      const writer = yield* store.create({ ...header, id });
      for (const batch of batches(events.slice(0, cut), sizes)) {
        yield* store.appendEvents(writer, batch);
      }
      const at = yield* store.checkpoint(writer);
      assert.equal(at, cut === 0 ? undefined : cut);
    }));
  });
/** Opens `id` by a whole replay, without its checkpoint. */
export const whole = (
  id: string,
): Effect.Effect<SessionHandle, unknown, SessionStore> =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    return yield* Effect.scoped(store.open(id, { wholeLog: true }));
  });

export const user = (seq: number, text: string): SessionEvent =>
  decoded({
    type: "user/message",
    seq,
    time: seq,
    surfaceOp: "append",
    data: {
      id: `u${seq}`,
      role: "user",
      content: [{ type: "text", text }],
      source: { kind: "user" },
    },
  });
export const texts = (prefix: string, n: number): SessionEvent[] =>
  Array.from({ length: n }, (_, seq) => user(seq, `${prefix}${seq}`));
export const header = { id: "x", createdAt: 1, isSeeded: false };

/**
 * A checkpoint with one number of its references moved by `delta` and its
 * hash made right again: what a writer with a wrong line table would
 * write. `lines`: a line reference (for a file; else the first held seq's
 * line or, for rows, an order entry is left alone and `heldFrom` moved).
 */
export const reforged = (
  text: string,
  at: number,
  delta: number,
  lines: boolean,
): string => {
  const body: unknown = JSON.parse(text.slice(65, -1));
  if (typeof body !== "object" || body === null) return text;
  const refs: unknown = Reflect.get(body, "lines");
  const heldBytes: unknown = Reflect.get(body, "heldBytes");
  if (lines && Array.isArray(refs) && refs.length > 0) {
    const i = at % refs.length;
    const ref: unknown = refs[i];
    refs[i] = (typeof ref === "number" ? ref : 0) + delta;
  } else if (typeof heldBytes === "number") {
    Reflect.set(body, "heldBytes", heldBytes + delta);
  } else {
    const lastBytes: unknown = Reflect.get(body, "lastBytes");
    Reflect.set(
      body,
      "lastBytes",
      Math.max(0, (typeof lastBytes === "number" ? lastBytes : 0) + delta),
    );
    Reflect.set(body, "last", "0".repeat(64));
  }
  const json = JSON.stringify(body);
  return `${createHash("sha256").update(json).digest("hex")}\n${json}\n`;
};
