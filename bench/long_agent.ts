/**
 * The long agent of docs/performance.md (Resume), generated deterministically through the
 * library's own operations: cycles of a `user/message`, an
 * `assistant/message` (text plus one `tool-call` block), the `tool/call`
 * and a `tool/result` citing the call, each cycle one `Session.appendAll`;
 * whenever the surface passes {@link MAX_NODES} nodes, `compact` replaces
 * the oldest so that about {@link KEEP_NODES} stay (the range ends on a
 * tool result, so no call is parted from its result). The surface stays
 * small while the log grows.
 *
 * Time comes from a `TestClock` moved by hand (100 ms per event), and the
 * words from a seeded PRNG: the same size gives the same bytes.
 *
 * It is not part of the package.
 *
 * @module
 */
import { Effect } from "effect";
import { TestClock } from "effect/testing";
import {
  compact,
  type EventDraft,
  Session,
  type SessionHeader,
  SessionSeq,
} from "@palimpsest/session";
import { surfaceEvent, surfaceNodes } from "@palimpsest/session/internal";
import {
  cycleData,
  mulberry32,
  WORDS,
  wordsFrom,
} from "../tests/_helpers/workload.ts";

/** Compact once the surface holds more nodes than this. */
export const MAX_NODES = 2000;
/** About how many nodes a compaction leaves on the surface. */
export const KEEP_NODES = 200;

/** The header of the generated session. */
export const longAgentHeader = (id: string): SessionHeader => ({
  id,
  createdAt: START_TIME,
  isSeeded: false,
});

const START_TIME = 1_700_000_000_000;

// The standard workload's words, "checkpoint" for "prune".
const LONG_WORDS = WORDS.map((word) => word === "prune" ? "checkpoint" : word);

/** The drafts of one cycle (four events, three on the surface). */
const cycleDrafts = (
  cycle: number,
  callSeq: number,
  words: (n: number) => string,
  random: () => number,
): EventDraft[] => {
  // Drawn in the order the events come: user, assistant, result.
  const user = words(8 + Math.floor(random() * 24));
  const assistant = words(6 + Math.floor(random() * 20));
  const result = words(10 + Math.floor(random() * 40));
  const data = cycleData(cycle, { user, assistant, result });
  const drafts: ReadonlyArray<unknown> = [
    { type: "user/message", surfaceOp: "append", data: data.user },
    { type: "assistant/message", surfaceOp: "append", data: data.assistant },
    { type: "tool/call", data: data.call },
    {
      type: "tool/result",
      surfaceOp: "append",
      sourceEventSeqs: [SessionSeq.make(callSeq)],
      data: data.result,
    },
  ];
  // The standard workload's shapes, which are drafts of these types.
  return drafts as EventDraft[];
};

/** What {@link longAgent} built. */
export interface LongAgent {
  /** The session, with every event of its log. */
  readonly session: Session;
  /** How many compactions it holds. */
  readonly compactions: number;
}

/**
 * Generates the long agent's session of exactly `events` events.
 *
 * @param id The session id.
 * @param events How many events.
 * @param seed The PRNG seed.
 * @returns The session and its number of compactions.
 */
export const longAgent = (
  id: string,
  events: number,
  seed = 1,
): Effect.Effect<LongAgent, unknown> =>
  Effect.gen(function* () {
    const random = mulberry32(seed);
    const words = wordsFrom(random, LONG_WORDS);
    let session = Session.make(longAgentHeader(id));
    let compactions = 0;
    const tick = () =>
      TestClock.setTime(START_TIME + session.surface.nextSeq * 100);
    for (let cycle = 0; session.surface.nextSeq < events; cycle++) {
      const next = session.surface.nextSeq;
      const left = events - next;
      const nodes = surfaceNodes(session.surface);
      if (nodes.length > MAX_NODES && left >= 4) {
        // The oldest nodes up to a tool result, so that about KEEP_NODES
        // stay: a call is never parted from its result.
        let end = nodes.length - KEEP_NODES - 1;
        const typeAt = (i: number) => {
          const node = nodes[i];
          return node === undefined
            ? undefined
            : surfaceEvent(session.surface, node)?.type;
        };
        while (end > 0 && typeAt(end) !== "tool/result") end--;
        const compactionId = `k${compactions++}`;
        yield* tick();
        session = yield* compact(session, {
          startSeq: nodes[0] ?? 0,
          endSeq: nodes[end] ?? 0,
          summary: `Summary ${compactionId}: ${words(60)}`,
          compactionId,
        });
        continue;
      }
      const drafts = cycleDrafts(cycle, next + 2, words, random);
      yield* tick();
      session = yield* Session.appendAll(session, drafts.slice(0, left));
    }
    return { session, compactions };
  }).pipe(Effect.provide(TestClock.layer()));
