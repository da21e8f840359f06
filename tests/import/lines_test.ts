/**
 * The source reader: lines across reads, the line bound, blank lines, and a
 * torn final line.
 */
import { Result } from "effect";
import assert from "node:assert/strict";
import { withTempFile } from "../_helpers/temp_file.ts";
import { forEachRecord } from "../../src/import/lines.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";

const withFile = (text: string, f: (file: string) => void): void =>
  withTempFile("s.jsonl", text, f);

const collect = (
  file: string,
  recover: boolean,
  maxLineBytes: number,
) => {
  const seen: Array<[number, unknown]> = [];
  const result = forEachRecord(
    file,
    { recover, maxLineBytes },
    (value, line) => {
      seen.push([line, value]);
      return Result.succeed(undefined);
    },
  );
  return { seen, result };
};

Deno.test("forEachRecord reads lines longer than one read, and skips blank lines", () => {
  const long = "x".repeat(200_000);
  withFile(`{"a":1}\n\n{"b":"${long}"}\n{"c":3}\n`, (file) => {
    const { seen, result } = collect(file, false, 1 << 20);
    assert.ok(Result.isSuccess(result));
    assert.deepEqual(seen.map(([line]) => line), [1, 3, 4]);
    assert.deepEqual(seen[1]?.[1], { b: long });
  });
});

Deno.test("forEachRecord refuses a line over the bound, or skips it under recover", () => {
  const long = "y".repeat(100_000);
  withFile(`{"a":1}\n{"b":"${long}"}\n{"c":3}\n`, (file) => {
    const refused = collect(file, false, 1000);
    thenFails(failureOf(refused.result), "ImportLineTooLong", { line: 2 });
    const recovered = collect(file, true, 1000);
    assert.deepEqual(recovered.seen.map(([line]) => line), [1, 3]);
    assert.ok(Result.isSuccess(recovered.result));
    if (Result.isSuccess(recovered.result)) {
      assert.deepEqual(
        recovered.result.success.skipped.map((s) => [s.line, s.reason]),
        [[2, "too-long"]],
      );
    }
  });
});

Deno.test("forEachRecord reports a torn final line instead of refusing it", () => {
  withFile(`{"a":1}\n{"b":`, (file) => {
    const { seen, result } = collect(file, false, 1000);
    assert.deepEqual(seen.map(([line]) => line), [1]);
    assert.ok(Result.isSuccess(result));
    if (Result.isSuccess(result)) {
      assert.deepEqual(result.success.skipped.map((s) => [s.line, s.reason]), [[
        2,
        "torn",
      ]]);
    }
  });
});

Deno.test("forEachRecord accepts a complete final line without a newline", () => {
  withFile(`{"a":1}\n{"b":2}`, (file) => {
    const { seen } = collect(file, false, 1000);
    assert.deepEqual(seen, [[1, { a: 1 }], [2, { b: 2 }]]);
  });
});

Deno.test("forEachRecord refuses a file it cannot open with the system error code", () => {
  withTempFile("absent.jsonl", undefined, (file) => {
    const { seen, result } = collect(file, false, 1000);
    assert.deepEqual(seen, []);
    thenFails(failureOf(result), "FileIoError", {
      path: file,
      operation: "open",
      code: "ENOENT",
    });
  });
});
