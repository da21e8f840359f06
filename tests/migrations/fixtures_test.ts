/**
 * Every fixture under tests/fixtures/v0|v1|v2 migrates to its expected result: the v3 JSONL
 * (`*.expected.jsonl`, compared byte for byte) or a refusal (`*.expected.json`: the error tag and
 * line, plus the v3 tag for `MigratedEventRejected`). Migration never changes its input.
 */
import assert from "node:assert/strict";
import { parseLines, runMigrate } from "./_helpers.ts";

const root = new URL("../fixtures/", import.meta.url);

interface Expected {
  readonly tag: string;
  readonly line: number;
  readonly v3Tag?: string;
}

const isExpected = (value: unknown): value is Expected =>
  typeof value === "object" && value !== null && "tag" in value &&
  "line" in value;

for (const version of ["v0", "v1", "v2"]) {
  Deno.test(`${version} fixtures migrate to their expected results`, async (t) => {
    const dir = new URL(`${version}/`, root);
    const names = [...Deno.readDirSync(dir)]
      .map((e) => e.name)
      .filter((n) => n.endsWith(".jsonl") && !n.endsWith(".expected.jsonl"))
      .sort();
    assert.ok(names.length > 0);
    for (const name of names) {
      await t.step(name, () => {
        const base = name.slice(0, -".jsonl".length);
        const input = Deno.readTextFileSync(new URL(name, dir));
        const lines = parseLines(input);
        const before = JSON.stringify(lines);
        const out = runMigrate(lines);
        assert.equal(
          JSON.stringify(lines),
          before,
          "migrate changed its input",
        );
        let expectedText: string | undefined;
        try {
          expectedText = Deno.readTextFileSync(
            new URL(`${base}.expected.jsonl`, dir),
          );
        } catch {
          expectedText = undefined;
        }
        if (expectedText !== undefined) {
          assert.ok(
            out.ok,
            out.ok
              ? ""
              : `refused: ${out.error._tag} at line ${
                "line" in out.error ? out.error.line : "?"
              }`,
          );
          assert.equal(out.text, expectedText);
          return;
        }
        const expected: unknown = JSON.parse(
          Deno.readTextFileSync(new URL(`${base}.expected.json`, dir)),
        );
        assert.ok(isExpected(expected));
        assert.ok(!out.ok, "expected a refusal");
        assert.equal(out.error._tag, expected.tag);
        assert.equal(
          "line" in out.error ? out.error.line : undefined,
          expected.line,
        );
        if (expected.v3Tag !== undefined) {
          assert.equal(
            out.error._tag === "MigratedEventRejected"
              ? out.error.tag
              : undefined,
            expected.v3Tag,
          );
        }
      });
    }
  });
}
