/**
 * Helpers shared by the migration tests: running `migrate` over parsed lines synchronously and
 * reading fixture files.
 *
 * @module
 */
import { Cause, Effect, Exit, Stream } from "effect";
import {
  migrate,
  type MigratedRecord,
  type MigrationError,
  type MigrationOptions,
  toJsonLine,
} from "../../migrations/mod.ts";

/** The outcome of migrating parsed lines: the JSONL text, or the refusal. */
export type Outcome =
  | {
    readonly ok: true;
    readonly records: ReadonlyArray<MigratedRecord>;
    readonly text: string;
  }
  | { readonly ok: false; readonly error: MigrationError };

/**
 * Migrate parsed lines (header first) and collect the result.
 *
 * @param lines The parsed lines.
 * @param options Migration options.
 * @returns The outcome.
 */
export function runMigrate(
  lines: ReadonlyArray<unknown>,
  options: MigrationOptions = {},
): Outcome {
  const exit = Effect.runSyncExit(
    Stream.runCollect(migrate(Stream.fromIterable(lines), options)),
  );
  if (Exit.isSuccess(exit)) {
    return {
      ok: true,
      records: exit.value,
      text: exit.value.map((r) => `${toJsonLine(r)}\n`).join(""),
    };
  }
  const failure = exit.cause.reasons.find(Cause.isFailReason);
  if (failure === undefined) {
    throw new Error(`Migration died: ${Cause.pretty(exit.cause)}`);
  }
  return { ok: false, error: failure.error };
}

/**
 * The parsed lines of a JSONL text.
 *
 * @param text The file's text.
 * @returns One parsed value per non-empty line.
 */
export function parseLines(text: string): Array<unknown> {
  return text.split("\n").filter((l) => l !== "").map((l): unknown =>
    JSON.parse(l)
  );
}

/**
 * Migrate and expect a refusal.
 *
 * @param lines The parsed lines.
 * @returns The error.
 */
export function refusal(lines: ReadonlyArray<unknown>): MigrationError {
  const out = runMigrate(lines);
  if (out.ok) {
    throw new Error("Expected the migration to be refused but it succeeded");
  }
  return out.error;
}

/**
 * Migrate and expect success.
 *
 * @param lines The parsed lines.
 * @returns The outcome's records and text.
 */
export function success(
  lines: ReadonlyArray<unknown>,
): { readonly records: ReadonlyArray<MigratedRecord>; readonly text: string } {
  const out = runMigrate(lines);
  if (!out.ok) {
    throw new Error(
      `Expected success but got ${out.error._tag}: ${out.error.message}`,
    );
  }
  return out;
}

/** The session id every builder uses. */
export const sessionId = "sess-t";

/**
 * A header of the given version.
 *
 * @param version The format version.
 * @returns The header line.
 */
export function header(version: number): Record<string, unknown> {
  return {
    type: "session",
    version,
    id: sessionId,
    createdAt: 0,
    isSeeded: false,
  };
}

/**
 * Given old events of a version (seqs and times assigned densely when absent), migrate them.
 *
 * @param version The format version of the events.
 * @param events Events without (or with) `seq`/`time`.
 * @returns The outcome.
 */
export function given(
  version: number,
  events: ReadonlyArray<Record<string, unknown>>,
): Outcome {
  const lines = events.map((e, i) => ({ seq: i, time: 1000 + i, ...e }));
  return runMigrate([header(version), ...lines]);
}

/**
 * The v3 event lines (header excluded) of a successful outcome, as parsed objects.
 *
 * @param out The outcome.
 * @returns The events.
 */
export function eventsOf(out: Outcome): Array<Record<string, unknown>> {
  if (!out.ok) {
    throw new Error(
      `Expected success but got ${out.error._tag}: ${out.error.message}`,
    );
  }
  return out.text.split("\n").slice(1, -1).map((l): Record<string, unknown> =>
    JSON.parse(l)
  );
}

/**
 * The refusal of an outcome, for `thenFails`.
 *
 * @param out The outcome.
 * @returns The migration's error.
 */
export function errorOf(out: Outcome): MigrationError {
  if (out.ok) throw new Error("Expected a refusal but the migration succeeded");
  return out.error;
}

/** Small builders of old events' data. */
export const ev = {
  turnStart: (turn = 0): Record<string, unknown> => ({
    type: "turn/start",
    data: { turn },
  }),
  turnEnd: (turn = 0): Record<string, unknown> => ({
    type: "turn/end",
    data: { turn, reason: { kind: "completed" } },
  }),
  stepStart: (turn = 0, step = 0): Record<string, unknown> => ({
    type: "step/start",
    data: { turn, step },
  }),
  stepEnd: (turn = 0, step = 0): Record<string, unknown> => ({
    type: "step/end",
    data: { turn, step },
  }),
  header: (system?: string): Record<string, unknown> => ({
    type: "request/header",
    data: {
      header: {
        config: { provider: "p", model: "m" },
        ...(system === undefined ? {} : { system }),
      },
      reason: "step",
    },
  }),
  user: (
    id: string,
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> => ({
    type: "user/message",
    data: {
      id,
      role: "user",
      content: [{ type: "text", text: id }],
      source: { kind: "user" },
    },
    surfaceOp: "append",
    ...extra,
  }),
  chunk: (chunk: unknown, turn = 0, step = 0): Record<string, unknown> => ({
    type: "assistant/chunk",
    data: { turn, step, chunk },
  }),
  /** One `assistant/chunk` per text, of turn 0, step 0. */
  chunks: (...texts: ReadonlyArray<string>): Array<Record<string, unknown>> =>
    texts.map((text) => ev.chunk(text)),
  assistantV1: (
    id: string,
    sources?: ReadonlyArray<number>,
    turn = 0,
    step = 0,
  ): Record<string, unknown> => ({
    type: "assistant/message",
    data: {
      turn,
      step,
      message: {
        id,
        role: "assistant",
        content: [{ type: "text", text: id }],
        source: { kind: "model", provider: "p", model: "m" },
      },
    },
    surfaceOp: "append",
    ...(sources === undefined ? {} : { sourceEventSeqs: sources }),
  }),
  /** The v1 message without sources, its data given the stream v2 requires. */
  assistantV2: (id: string, turn = 0, step = 0): Record<string, unknown> => {
    const v1 = ev.assistantV1(id, undefined, turn, step);
    return { ...v1, data: { ...(v1.data as object), stream: [] } };
  },
};
