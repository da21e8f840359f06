/**
 * Fuzzing what is built on the fold (docs/rewriting-history.md) with logs read from bytes:
 * provenance over every seq, and compaction, pruning, system prompts and
 * forks with random arguments, valid or not. Every call returns a value or
 * a tagged failure: no throw, no defect, and a refused operation leaves the
 * session as it was.
 */
import assert from "node:assert/strict";
import { Cause, Effect, Exit, Result } from "effect";
import {
  compact,
  deriveMessages,
  fork,
  isSurfaceEvent,
  lineage,
  type LineageNode,
  pruneLargeToolResults,
  pruneToolResult,
  selectCompactableRange,
  selectCompactableRangeByBudget,
  type Session,
  SessionSeq,
  setSystemPrompt,
  shadowedBy,
  surfaceAt,
} from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import { readSessionBytes } from "@palimpsest/session/jsonl";
import {
  config,
  countsReport,
  fuzz,
  heavyRuns,
  type Rng,
} from "../_helpers/fuzz.ts";
import { genValidLog } from "../_helpers/fuzz_logs.ts";
import { headerLine } from "../_helpers/build.ts";

const encoder = new TextEncoder();

const sessionOf = (text: string): Session => {
  const exit = Effect.runSyncExit(readSessionBytes(encoder.encode(text)));
  assert.ok(Exit.isSuccess(exit));
  return exit.value.session;
};

const randomSession = (rng: Rng): Session => {
  const log = genValidLog(rng, rng.int(1, 40));
  return sessionOf(
    headerLine("fuzz") +
      log.events.map((e) => `${JSON.stringify(e)}\n`).join(""),
  );
};

/** Every node's sources are its event's cited seqs, in order. */
const checkTree = (root: LineageNode): void => {
  const stack = [root];
  for (;;) {
    const node = stack.pop();
    if (node === undefined) return;
    const event = node.event;
    // Only surface events cite: opaque metadata is never interpreted.
    const cited = event !== undefined && isSurfaceEvent(event) &&
        event.type !== "assistant/message"
      ? event.sourceEventSeqs ?? []
      : [];
    assert.deepEqual(node.sources.map((s) => s.seq), [...cited]);
    stack.push(...node.sources);
  }
};

/** Runs an operation; a failure must be tagged and change nothing. */
const attempt = (
  session: Session,
  op: Effect.Effect<unknown, { readonly _tag: string }>,
): boolean => {
  const before = surfaceNodes(session.surface);
  const exit = Effect.runSyncExit(op);
  if (Exit.isSuccess(exit)) return true;
  assert.ok(!Cause.hasDies(exit.cause), Cause.pretty(exit.cause));
  const found = Cause.findError(exit.cause);
  assert.ok(Result.isSuccess(found));
  assert.equal(typeof found.success._tag, "string");
  assert.deepEqual(surfaceNodes(session.surface), before);
  return false;
};

Deno.test("fuzz: provenance over every seq of random logs", () => {
  fuzz("history/provenance", config.runs, (rng) => {
    const session = randomSession(rng);
    const next = session.surface.nextSeq;
    for (let s = 0; s <= next; s++) {
      const seq = SessionSeq.make(s);
      const tree = Result.getOrThrow(lineage(session, seq));
      if (s < next) {
        assert.ok(tree !== undefined && tree.seq === s);
        checkTree(tree);
      } else assert.equal(tree, undefined);
      const by = Result.getOrThrow(shadowedBy(session, seq));
      if (by !== undefined) assert.ok(by > s && by < next);
      Result.getOrThrow(surfaceAt(session, seq));
    }
  });
});

Deno.test("fuzz: a chain of replacements longer than the call stack", () => {
  fuzz("history/replacement-chain", heavyRuns(150), (rng) => {
    const n = config.runs >= 1000 ? 100000 : 20000;
    const msg = `{"id":"u","role":"user","content":[],"source":{"kind":"${
      rng.pick(["user", "plugin"])
    }"}}`;
    let text = headerLine("fuzz");
    text +=
      `{"type":"user/message","seq":0,"time":0,"data":${msg},"surfaceOp":"append"}\n`;
    for (let k = 1; k <= n; k++) {
      text +=
        `{"type":"user/message","seq":${k},"time":0,"data":${msg},"surfaceOp":{"op":"replace","startSeq":${
          k - 1
        },"endSeq":${k - 1}},"sourceEventSeqs":[${k - 1}]}\n`;
    }
    const session = sessionOf(text);
    const tree = Result.getOrThrow(lineage(session, SessionSeq.make(n)));
    assert.ok(tree !== undefined);
    let depth = 0;
    for (let node = tree; node.sources[0] !== undefined; depth++) {
      node = node.sources[0];
    }
    assert.equal(depth, n);
    assert.equal(Result.getOrThrow(shadowedBy(session, SessionSeq.make(0))), 1);
  });
});

Deno.test("fuzz: compaction, pruning, prompts and forks with random arguments", () => {
  const tried = new Map<string, number>();
  fuzz("history/operations", config.runs, (rng) => {
    let session = randomSession(rng);
    for (let step = 0; step < 6; step++) {
      const nodes = surfaceNodes(session.surface);
      const anySeq = () =>
        SessionSeq.make(
          rng.chance(0.8) && nodes.length > 0
            ? rng.pick(nodes)
            : rng.int(0, session.surface.nextSeq + 2),
        );
      const which = rng.int(0, 6);
      let op: Effect.Effect<Session, { readonly _tag: string }>;
      switch (which) {
        case 0:
          op = compact(session, {
            startSeq: anySeq(),
            endSeq: anySeq(),
            summary: "summary",
            compactionId: `c${step}`,
          });
          break;
        case 1: {
          const range = selectCompactableRange(session.surface, {
            keepLast: rng.int(-1, 5),
          });
          const byBudget = selectCompactableRangeByBudget(session.surface, {
            keepChars: rng.int(0, 200),
          });
          const chosen = rng.chance(0.5) ? range : byBudget;
          if (chosen === undefined) continue;
          op = compact(session, {
            ...chosen,
            summary: "summary",
            compactionId: `c${step}`,
          });
          break;
        }
        case 2:
          op = pruneToolResult(session, anySeq(), [
            { type: "text", text: "[pruned]" },
          ]);
          break;
        case 3:
          op = Effect.map(
            pruneLargeToolResults(session, {
              thresholdChars: rng.int(0, 40),
              headChars: rng.int(0, 5),
              tailChars: rng.int(0, 5),
            }),
            (r) => r.session,
          );
          break;
        case 4:
          op = setSystemPrompt(session, rng.chance(0.3) ? "" : "Be brief");
          break;
        default:
          op = fork(session, rng.chance(0.7) ? anySeq() : undefined);
      }
      const name = [
        "compact",
        "compact-selected",
        "prune",
        "prune-large",
        "system-prompt",
        "fork",
        "fork",
      ][which] ?? "";
      const exit = Effect.runSyncExit(op);
      const ok = attempt(session, op);
      assert.equal(ok, Exit.isSuccess(exit));
      tried.set(
        `${name}:${ok ? "ok" : "refused"}`,
        (tried.get(`${name}:${ok ? "ok" : "refused"}`) ?? 0) + 1,
      );
      if (Exit.isSuccess(exit) && which !== 5) {
        session = exit.value;
        deriveMessages(session.surface);
      }
    }
  });
  console.log(
    [...tried.entries()].sort().map(([k, v]) =>
      `fuzz-history-outcome ${k}=${v}`
    ).join("\n"),
  );
  console.log(countsReport());
});
