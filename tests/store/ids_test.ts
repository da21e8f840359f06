import assert from "node:assert/strict";
import fc from "fast-check";
import { Result } from "effect";
import { decodeSessionId, encodeSessionId } from "@palimpsest/session/jsonl";
import { sessionIdOfFileName } from "../../src/jsonl/names.ts";
import { thenFails } from "../_helpers/then.ts";

Deno.test("session ids as file names", async (t) => {
  await t.step("encoding is reversible and uses only safe characters", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }),
        (id) => {
          // Kept bytes stay one character, every other byte becomes %XX.
          const nameBytes = [...new TextEncoder().encode(id)].reduce(
            (n, byte) =>
              n + (/[a-z0-9_-]/.test(String.fromCharCode(byte)) ? 1 : 3),
            0,
          );
          const result = encodeSessionId(id);
          if (nameBytes > 200) {
            assert.ok(Result.isFailure(result));
            assert.equal(result.failure.problem, "too-long");
            return;
          }
          const stem = Result.getOrThrow(result);
          assert.match(stem, /^[a-z0-9_%A-F-]+$/);
          assert.ok(!stem.includes("/") && !stem.includes("\\"));
          assert.ok(!stem.includes("."));
          assert.equal(decodeSessionId(stem), id);
        },
      ),
      { numRuns: 300, seed: 20261202 },
    );
  });
  await t.step("ids that try to escape stay one plain name", () => {
    for (
      const id of ["..", ".", "../x", "a/b", "a\\b", "\0", "/etc/passwd", "C:"]
    ) {
      const stem = Result.getOrThrow(encodeSessionId(id));
      assert.match(stem, /^[a-z0-9_%A-F-]+$/, id);
      assert.equal(decodeSessionId(stem), id);
    }
  });
  await t.step("case differences survive case-insensitive file systems", () => {
    const upper = Result.getOrThrow(encodeSessionId("Chat"));
    const lower = Result.getOrThrow(encodeSessionId("chat"));
    assert.notEqual(upper.toLowerCase(), lower.toLowerCase());
  });
  await t.step("empty, ill-formed and too long ids are refused", () => {
    const cases: Array<[string, string]> = [
      ["", "empty"],
      ["a\uD800b", "not-well-formed"],
      ["é".repeat(40), "too-long"],
    ];
    for (const [id, problem] of cases) {
      const result = encodeSessionId(id);
      assert.ok(Result.isFailure(result));
      thenFails(result.failure, "InvalidSessionId");
      assert.equal(result.failure.problem, problem);
    }
  });
  await t.step("names that are not exact encodings decode to nothing", () => {
    for (const stem of ["", "%2e", "%41x%", "A", "a.b", "%zz", "%61", "%FF"]) {
      assert.equal(decodeSessionId(stem), undefined, stem);
    }
  });
});

Deno.test("sessionIdOfFileName() reads the id of a store file name and nothing else", () => {
  fc.assert(
    fc.property(fc.string({ minLength: 1, maxLength: 20 }), (id) => {
      const stem = encodeSessionId(id);
      if (Result.isFailure(stem)) return;
      assert.equal(sessionIdOfFileName(`${stem.success}.jsonl`), id);
      assert.equal(sessionIdOfFileName(stem.success), undefined);
    }),
    { numRuns: 200, seed: 20261203 },
  );
  for (const name of ["s.jsonl.lock", "Crash.v3.jsonl", ".jsonl", "s.json"]) {
    assert.equal(sessionIdOfFileName(name), undefined, name);
  }
});
