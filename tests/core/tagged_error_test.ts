import assert from "node:assert/strict";
import { Effect, Exit } from "effect";
import {
  type TaggedErrorBases,
  taggedErrorBases,
} from "../../src/core/tagged_error.ts";

const Tagged: TaggedErrorBases<"NotFound" | "Gone"> = taggedErrorBases();

class NotFound extends Tagged.NotFound<{ readonly path: string }> {
  override readonly message: string = `Not found: ${this.path}`;
}

class Gone extends Tagged.Gone<{ readonly path: string }> {}

Deno.test("a tagged error has its tag, its fields and its message as Data.Error's own keys", () => {
  const error = new NotFound({ path: "a" });
  assert.equal(error._tag, "NotFound");
  assert.equal(error.path, "a");
  assert.equal(error.message, "Not found: a");
  assert.equal(error.name, "Error");
  assert.deepEqual(Object.keys(error), ["path", "_tag", "message"]);
  assert.equal(
    JSON.stringify(error),
    '{"path":"a","_tag":"NotFound","message":"Not found: a"}',
  );
});

Deno.test("each tag has its own base, made once", () => {
  assert.equal(Tagged.NotFound, Tagged.NotFound);
  assert.notEqual(Tagged.NotFound, Tagged.Gone);
  const gone = new Gone({ path: "b" });
  assert.equal(gone._tag, "Gone");
  assert.ok(gone instanceof Gone && gone instanceof Error);
  assert.ok(!(gone instanceof NotFound));
});

Deno.test("catchTag narrows on a tagged error", async () => {
  const exit = await Effect.runPromiseExit(
    Effect.fail(new Gone({ path: "c" })).pipe(
      Effect.catchTag("Gone", (e) => Effect.succeed(e.path)),
    ),
  );
  assert.deepEqual(exit, Exit.succeed("c"));
});
