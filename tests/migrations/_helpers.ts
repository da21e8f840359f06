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
