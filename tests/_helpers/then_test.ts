/**
 * The refusal helpers fail a test when the outcome is not the one named:
 * every `thenFails` in the suite relies on it.
 */
import assert from "node:assert/strict";
import { Data, Effect, Exit, Result } from "effect";
import { failureOf, successOf, thenFails } from "./then.ts";

class Refused extends Data.TaggedError("Refused")<{
  readonly line: number;
  readonly path: ReadonlyArray<string>;
}> {}
class Other extends Data.TaggedError("Other")<{ readonly line: number }> {}

const refusedAs = (error: Refused | Other): Refused | Other => error;
const refused = refusedAs(new Refused({ line: 3, path: ["a", "b"] }));

Deno.test("thenFails passes on the tag and the given fields, and returns the error", () => {
  const error = thenFails(refused, "Refused", { line: 3, path: ["a", "b"] });
  assert.deepEqual(error.path, ["a", "b"]);
  assert.equal(thenFails(refused, "Refused"), refused);
});

Deno.test("thenFails fails on another tag", () => {
  assert.throws(() => thenFails(refused, "Other"), assert.AssertionError);
  const other = refusedAs(new Other({ line: 3 }));
  assert.throws(
    () => thenFails(other, "Refused", { line: 3 }),
    assert.AssertionError,
  );
});

Deno.test("thenFails fails on a field that differs, deeply compared", () => {
  assert.throws(
    () => thenFails(refused, "Refused", { line: 4 }),
    assert.AssertionError,
  );
  assert.throws(
    () => thenFails(refused, "Refused", { path: ["a"] }),
    assert.AssertionError,
  );
});

Deno.test("failureOf gives the typed failure of an exit or a result", () => {
  const exit = Effect.runSyncExit(Effect.fail(refused));
  assert.equal(failureOf(exit), refused);
  assert.equal(failureOf(Result.fail(refused)), refused);
});

Deno.test("failureOf throws on a success and on a defect", () => {
  assert.throws(() => failureOf(Exit.succeed(1)));
  assert.throws(() => failureOf(Result.succeed(1)));
  assert.throws(() => failureOf(Effect.runSyncExit(Effect.die("boom"))));
});

Deno.test("successOf gives the value of a success and throws on a failure", () => {
  assert.equal(successOf(Exit.succeed(1)), 1);
  assert.throws(() => successOf(Exit.fail(refused)));
});
