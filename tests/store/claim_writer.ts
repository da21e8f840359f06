/**
 * `deno run -A claim_writer.ts ROOT ID [now]`: a process that takes the
 * JSONL writer claim of session ID under ROOT when told, for the claim
 * race tests. It prints `ready`, then reads commands, one per line:
 *
 * - `open`: opens ID for writing and prints `opened PID`, or the error's tag
 *   and a JSON object of its fields and message;
 * - `append`: appends one `turn/start` whose turn is this process's pid and
 *   prints `appended SEQ` once it resolved (or the error's tag);
 * - `close`: releases the session and prints `closed`.
 *
 * With `now`, it opens at once (no `ready`, no `open` needed). It exits when
 * its input ends, releasing what it holds.
 *
 * @module
 */
import { Cause, Effect, Exit, Scope } from "effect";
import process from "node:process";
import { createInterface } from "node:readline";
import { makeJsonlStore, type SessionHandle } from "@palimpsest/session";

const [root = ".", id = "s", now] = Deno.args;

const tagOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error
    ? String(error._tag)
    : String(error);

/** What the tests read of an error: its fields and message. */
const fieldsOf = (error: unknown): Record<string, unknown> => {
  if (typeof error !== "object" || error === null) return {};
  const fields: Record<string, unknown> = {};
  for (const key of ["pid", "liveness", "reason", "permission", "code"]) {
    if (key in error) fields[key] = Reflect.get(error, key);
  }
  if (error instanceof Error) fields["message"] = error.message;
  return fields;
};

const failureLine = (cause: Cause.Cause<unknown>): string => {
  const failure = cause.reasons[0];
  return failure !== undefined && Cause.isFailReason(failure)
    ? `${tagOf(failure.error)} ${JSON.stringify(fieldsOf(failure.error))}`
    : "Defect";
};

const made = await Effect.runPromiseExit(makeJsonlStore({ root }));
if (Exit.isFailure(made)) {
  console.log(failureLine(made.cause));
  Deno.exit(0);
}
const store = made.value;
let scope: Scope.Closeable | undefined;
let handle: SessionHandle | undefined;

const open = async (): Promise<void> => {
  scope = await Effect.runPromise(Scope.make());
  const opened = await Effect.runPromiseExit(
    Scope.provide(store.open(id, { mode: "write" }), scope),
  );
  if (Exit.isSuccess(opened)) {
    handle = opened.value;
    console.log(`opened ${process.pid}`);
  } else {
    await Effect.runPromise(Scope.close(scope, Exit.void));
    scope = undefined;
    console.log(failureLine(opened.cause));
  }
};

const close = async (): Promise<void> => {
  if (scope !== undefined) {
    await Effect.runPromise(Scope.close(scope, Exit.void));
  }
  scope = undefined;
  handle = undefined;
};

if (now === "now") await open();
else console.log("ready");

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line === "open") await open();
  else if (line === "append") {
    if (handle === undefined) {
      console.log("NotOpen");
      continue;
    }
    const appended = await Effect.runPromiseExit(
      store.append(handle, [{
        type: "turn/start",
        data: { turn: process.pid },
      }]),
    );
    console.log(
      Exit.isSuccess(appended)
        ? `appended ${appended.value.events[0]?.seq}`
        : "AppendFailed",
    );
  } else if (line === "close") {
    await close();
    console.log("closed");
  }
}
await close();
