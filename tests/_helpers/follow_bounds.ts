/**
 * The amplification inputs as follows meet them: for each input, the
 * reader's verdict on the whole log (the error's tag, line and inner tag,
 * or the number of events), and the same verdict taken from a follow's
 * exit, so a backend's follow test can assert that it refuses what the
 * reader refuses, at the same line, for the same reason.
 *
 * @module
 */
import { Cause, Effect, Exit, Stream } from "effect";
import type { FollowError, SessionEvent } from "@palimpsest/session";
import { readSessionBytes } from "@palimpsest/session/jsonl";
import { HEADER, inputs } from "./amplification_inputs.ts";

/** What reading or following a log came to. */
export interface Verdict {
  /** The failure's tag, or `"events"` when the log was served. */
  readonly tag: string;
  /** The failing line (1-based), when there is one. */
  readonly line?: number;
  /** The inner error's tag, when there is one. */
  readonly innerTag?: string;
  /** How many events were served, when nothing failed. */
  readonly events?: number;
}

/** One input: its name, its lines after the header, the reader's verdict. */
export interface BoundsCase {
  /** The input's name. */
  readonly name: string;
  /** The event lines. */
  readonly lines: ReadonlyArray<string>;
  /** The whole log's text, header first, each line ended by `\n`. */
  readonly text: string;
  /** What the reader says of it. */
  readonly reader: Verdict;
}

/** The verdict of a failed exit: its error, or its defect. */
const verdictOfFailure = (cause: Cause.Cause<unknown>): Verdict => {
  const error: unknown = Cause.squash(cause);
  if (typeof error !== "object" || error === null || !("_tag" in error)) {
    return { tag: `defect: ${String(error).slice(0, 80)}` };
  }
  const e = error as {
    readonly _tag: string;
    readonly line?: number;
    readonly innerTag?: string;
  };
  return {
    tag: e._tag,
    ...(e.line === undefined ? {} : { line: e.line }),
    ...(e.innerTag === undefined ? {} : { innerTag: e.innerTag }),
  };
};

/** The amplification inputs with the reader's verdict on each. */
export const boundsCases = (): ReadonlyArray<BoundsCase> =>
  inputs.map(([name, make]) => {
    const lines = make();
    const text = `${[HEADER, ...lines].join("\n")}\n`;
    const read = Effect.runSyncExit(
      readSessionBytes(new TextEncoder().encode(text)),
    );
    const reader: Verdict = Exit.isSuccess(read)
      ? { tag: "events", events: read.value.events.length }
      : verdictOfFailure(read.cause);
    return { name, lines, text, reader };
  });

/**
 * A follow's verdict: it is taken for at most as many events as the log
 * has lines, so a follow that serves every line ends instead of waiting.
 *
 * @param follow The follow of the whole log, from seq 0.
 * @param lines How many event lines the log has.
 * @returns The verdict.
 */
export const followVerdict = (
  follow: Stream.Stream<SessionEvent, FollowError>,
  lines: number,
): Effect.Effect<Verdict> =>
  Effect.map(
    Effect.exit(Stream.runCollect(Stream.take(follow, lines))),
    (exit): Verdict =>
      Exit.isSuccess(exit)
        ? { tag: "events", events: exit.value.length }
        : verdictOfFailure(exit.cause),
  );
