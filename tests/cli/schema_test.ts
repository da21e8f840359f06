import { Ajv2020 } from "ajv/dist/2020.js";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { eventJsonSchema } from "@palimpsest/session/schema";
import { cliInProcess, fixture, json, root } from "./_cli.ts";
import { user } from "../_helpers/build.ts";

// ajv is a test-only dependency: it checks the generated schema with an
// independent draft 2020-12 validator instead of trusting its structure.
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(
  eventJsonSchema(),
);

const eventLines = (file: string): ReadonlyArray<unknown> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").slice(1)
    .map((l) => JSON.parse(l));

const v3Files = [
  fixture("valid.jsonl"),
  ...["v0", "v1", "v2"].flatMap((dir) =>
    fs.readdirSync(path.join(root, "tests", "fixtures", dir))
      .filter((name) => name.endsWith(".expected.jsonl"))
      .map((name) => path.join(root, "tests", "fixtures", dir, name))
  ),
];

Deno.test("eventJsonSchema() validates v3 event lines", async (t) => {
  await t.step("the schema command prints eventJsonSchema()", async () => {
    const run = await cliInProcess("schema", "--json");
    assert.equal(run.code, 0);
    assert.deepEqual(json(run), eventJsonSchema());
  });

  await t.step("every line of every v3 fixture is accepted", () => {
    assert.ok(v3Files.length >= 4);
    for (const file of v3Files) {
      for (const line of eventLines(file)) {
        assert.equal(
          validate(line),
          true,
          `${path.basename(file)}: ${JSON.stringify(validate.errors)}`,
        );
      }
    }
  });

  const base = user(3, { id: "u0", text: "hi", time: 0 });

  await t.step("event-local violations are refused", () => {
    assert.equal(validate(base), true);
    const bad: ReadonlyArray<[string, unknown]> = [
      ["unknown key", { ...base, extra: 1 }],
      ["negative seq", { ...base, seq: -1 }],
      ["fractional seq", { ...base, seq: 1.5 }],
      ["missing data", { ...base, data: undefined }],
      ["surface type without surfaceOp", { ...base, surfaceOp: undefined }],
      ["replace with an extra key", {
        ...base,
        surfaceOp: { op: "replace", startSeq: 0, endSeq: 0, start: 0 },
      }],
      ["empty sources", { ...base, sourceEventSeqs: [] }],
      ["duplicate sources", { ...base, sourceEventSeqs: [1, 1] }],
      ["ignorable false", { ...base, ignorable: false }],
      ["surfaceOp on a log-only type", {
        type: "turn/start",
        seq: 0,
        time: 0,
        data: { turn: 0 },
        surfaceOp: "append",
      }],
      ["unknown type not ignorable", {
        type: "harness/x",
        seq: 0,
        time: 0,
        data: {},
      }],
    ];
    for (const [name, value] of bad) {
      const line = JSON.parse(JSON.stringify(value));
      assert.equal(validate(line), false, name);
    }
  });

  await t.step("an ignorable unknown type is accepted as opaque", () => {
    assert.equal(
      validate({
        type: "harness/x",
        seq: 0,
        time: 0,
        data: { any: [1] },
        ignorable: true,
      }),
      true,
    );
  });

  await t.step("on-disk source runs are accepted", () => {
    assert.equal(
      validate({ ...base, sourceEventSeqs: [[0, 2]] }),
      true,
      JSON.stringify(validate.errors),
    );
  });
});
