/**
 * Fuzzing crash repair: random agent logs (turns, steps, assistant messages
 * with tool calls, `tool/call` events, results sometimes missing, steering
 * messages, compactions and prunes) cut at every event position, as a crash
 * would leave them. For each cut the closers must fold onto the log by the
 * independent reference checker and decode back unchanged, and keep the
 * promise of `interruptedTurnClosers`: the transcript's violations after
 * repair are exactly those before it, less the unanswered calls of the last
 * assistant message of the open turn (so it is clean whenever those were the
 * only ones), and `pairToolCalls` answers what is left.
 */
import assert from "node:assert/strict";
import { Effect, Result } from "effect";
import {
  checkTranscript,
  compact,
  deriveMessages,
  deriveMessagesWithSources,
  Draft,
  type EventDraft,
  replay,
  selectCompactableRange,
  Session,
  type SessionEvent,
} from "@palimpsest/session";
import { interruptedTurnClosers } from "@palimpsest/session/internal";
import { decodeEventResult, encodeEvent } from "@palimpsest/session/schema";
import { pairToolCalls } from "@palimpsest/session/providers";
import { checkLog } from "../_helpers/reference_checker.ts";
import {
  assistantMessageDraft,
  toolResultMessageDraft,
} from "../_helpers/build.ts";
import * as Fuzz from "../_helpers/fuzz.ts";

const header = { id: "repair", createdAt: 0, isSeeded: false };
const model = { kind: "model", provider: "p", model: "m" } as const;

/** A random agent log, some results missing, as drafts appended in order. */
const genLog = (rng: Fuzz.Rng): ReadonlyArray<SessionEvent> => {
  let session = Session.make(header);
  const add = (draft: EventDraft) => {
    session = Effect.runSync(Session.append(session, draft));
  };
  let call = 0;
  const turns = rng.int(1, 4);
  for (let turn = 0; turn < turns; turn++) {
    add({ type: "turn/start", data: { turn } });
    add(Draft.user(`ask ${turn}`, { id: `u${turn}` }));
    const steps = rng.int(1, 3);
    for (let step = 0; step < steps; step++) {
      add({ type: "step/start", data: { turn, step } });
      const ids: string[] = [];
      for (let k = rng.int(0, 2); k > 0; k--) ids.push(`c${call++}`);
      add(assistantMessageDraft(turn, step, `a${turn}.${step}`, [
        ...(rng.chance(0.7) ? [{ type: "text" as const, text: "t" }] : []),
        ...ids.map((id) => ({
          type: "tool-call" as const,
          id,
          name: "ls",
          arguments: "{}",
        })),
      ], model));
      for (const id of ids) {
        if (rng.chance(0.8)) {
          add({
            type: "tool/call",
            data: { turn, step, callId: id, name: "ls", arguments: "{}" },
          });
        }
        if (rng.chance(0.75)) {
          add(toolResultMessageDraft(turn, step, `r${id}`, {
            type: "tool-result",
            toolCallId: id,
            content: [{ type: "text", text: "out" }],
          }));
        }
      }
      if (rng.chance(0.15)) {
        add({
          type: "user/message",
          surfaceOp: "append",
          data: {
            id: `s${turn}.${step}`,
            role: "user",
            content: [{ type: "text", text: "steer" }],
            source: { kind: "plugin", plugin: "steering" },
          },
        });
      }
      add({ type: "step/end", data: { turn, step } });
    }
    if (rng.chance(0.2)) {
      const range = selectCompactableRange(session.surface, {
        keepLast: rng.int(1, 4),
      });
      if (range !== undefined) {
        const compacted = Effect.runSync(Effect.result(compact(session, {
          ...range,
          summary: "summary",
          compactionId: `k${turn}`,
        })));
        if (Result.isSuccess(compacted)) session = compacted.success;
      }
    }
    add({
      type: "turn/end",
      data: { turn, reason: { kind: "completed" } },
    });
  }
  return Result.getOrThrow(Session.events(session));
};

const key = (v: { readonly _tag: string; readonly callId: string }) =>
  `${v._tag}:${v.callId}`;

const sorted = (xs: ReadonlyArray<string>): string[] => [...xs].sort();

/** The open turn's start seq, or undefined when the last turn is closed. */
const openTurnStart = (
  events: ReadonlyArray<SessionEvent>,
): number | undefined => {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event?.type === "turn/end") return undefined;
    if (event?.type === "turn/start") return event.seq;
  }
  return undefined;
};

let clean = 0;
let keptViolations = 0;

Deno.test("fuzz: repair on logs cut at every event position", () => {
  Fuzz.fuzz(
    "repair/cut-every-position",
    Fuzz.heavyRuns(3, 10),
    (rng: Fuzz.Rng) => {
      const log = genLog(rng);
      for (let cut = 1; cut <= log.length; cut++) {
        const events = log.slice(0, cut);
        const closers = interruptedTurnClosers(events);
        const repaired = [...events, ...closers];
        // The closers fold, by the independent checker, and decode unchanged.
        const encoded = repaired.map((e) => encodeEvent(e));
        const verdict = checkLog(encoded);
        assert.ok(verdict.ok, `cut ${cut}: ${JSON.stringify(verdict)}`);
        for (const closer of closers) {
          const again = Result.getOrThrow(
            decodeEventResult(encodeEvent(closer)),
          );
          assert.deepStrictEqual(again, closer);
        }
        assert.deepEqual(interruptedTurnClosers(repaired), []);
        // The promise: exactly the open calls at the end are answered.
        const beforeSurface = Effect.runSync(replay(events));
        const before = checkTranscript(deriveMessages(beforeSurface));
        const withSeqs = deriveMessagesWithSources(beforeSurface);
        const start = openTurnStart(events);
        const closable = (v: (typeof before)[number]) =>
          v._tag === "UnansweredToolCall" &&
          v.nextAssistantIndex === undefined &&
          start !== undefined && (withSeqs[v.messageIndex]?.seq ?? -1) > start;
        const after = checkTranscript(
          deriveMessages(Effect.runSync(replay(repaired))),
        );
        assert.deepEqual(
          sorted(after.map(key)),
          sorted(before.filter((v) => !closable(v)).map(key)),
          `cut ${cut}`,
        );
        if (after.length === 0) clean++;
        else keptViolations++;
        // What repair cannot reach, the provider-side pairing answers.
        const paired = pairToolCalls(
          deriveMessages(Effect.runSync(replay(repaired))),
        );
        assert.deepEqual(checkTranscript(paired.messages), []);
      }
    },
  );
  console.log(Fuzz.countsReport());
  console.log(
    `fuzz-outcome repair/clean-after-repair=${clean}\nfuzz-outcome repair/violations-kept=${keptViolations}`,
  );
  assert.ok(Fuzz.config.runs === 0 || clean > 0);
});
