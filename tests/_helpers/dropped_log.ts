/**
 * A log with a prune, two compactions (the second over the first's
 * summary) and a rewind that undoes the second, for the tests of what a
 * compaction dropped (library, command line, view).
 *
 * Seqs: 0 user u0, 1 assistant a0 calling `ls` (c1), 2 tool/call, 3 its
 * result; 4 user u1, 5 assistant a1; 6 compaction/prune and 7 the pruned
 * result (in 3's place); c1 over 0..7: 8 start, 9 summary, 10 summary
 * message, 11 end; 12 user u2; c2 over 10..4: 13 start, 14 summary, 15
 * summary message, 16 end; 17 a rewind to right after 12 (takes 15 off,
 * brings 10, 4 back).
 */
import { Effect, Result } from "effect";
import {
  compact,
  Draft,
  pruneToolResult,
  rewind,
  Session,
  SessionSeq,
} from "@palimpsest/session";
import { encodeEventLine, encodeHeaderLine } from "@palimpsest/session/jsonl";
import * as fs from "node:fs";
import * as path from "node:path";

/** The long text of the result the prune replaced. */
export const LISTING = "a.txt\n".repeat(50);

/** Builds the log; see the module doc for its seqs. */
export const droppedLog = (options: { rewound: boolean } = {
  rewound: true,
}): Session =>
  Effect.runSync(Effect.gen(function* () {
    let session = Session.make({
      id: "dropped",
      createdAt: 0,
      isSeeded: false,
    });
    const a0 = Draft.assistant({
      turn: 0,
      step: 0,
      provider: "p",
      model: "m",
      content: "let me look",
      toolCalls: [{ id: "c1", name: "ls", arguments: { dir: "." } }],
      id: "a0",
    });
    session = yield* Session.appendAll(session, [
      Draft.user("list the files", { id: "u0" }),
      a0,
      ...Draft.toolCalls(a0),
    ]);
    const call = Result.getOrThrow(
      Session.eventAt(session, SessionSeq.make(2)),
    );
    if (call?.type !== "tool/call") throw new Error("expected a tool/call");
    session = yield* Session.appendAll(session, [
      Draft.toolResult(call, LISTING),
      Draft.user("thanks", { id: "u1" }),
      Draft.assistant({
        turn: 0,
        step: 1,
        provider: "p",
        model: "m",
        content: "you are welcome",
        id: "a1",
      }),
    ]);
    session = yield* pruneToolResult(session, 3, [
      { type: "text", text: "[pruned]" },
    ]);
    session = yield* compact(session, {
      startSeq: 0,
      endSeq: 7,
      summary: "listed files",
      compactionId: "c1",
    });
    session = yield* Session.append(session, Draft.user("more", { id: "u2" }));
    session = yield* compact(session, {
      startSeq: 10,
      endSeq: 4,
      summary: "listed files, thanked",
      compactionId: "c2",
    });
    if (!options.rewound) return session;
    return yield* rewind(session, {
      to: 12,
      event: Draft.user("edited", { id: "u3" }),
    });
  }));

/** Writes a session as a JSONL log file in a new folder; gives its path. */
export const writeLogFile = (session: Session, dir: string): string => {
  const events = Result.getOrThrow(
    Session.events(session, session.surface.baseSeq),
  );
  const file = path.join(dir, `${session.header.id}.jsonl`);
  fs.writeFileSync(
    file,
    encodeHeaderLine(session.header) +
      events.map((e) => encodeEventLine(e)).join(""),
  );
  return file;
};
