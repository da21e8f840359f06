import assert from "node:assert/strict";
import { Result } from "effect";
import { type CommandSpec, parseArgs, usageLine } from "../../cli/args.ts";

const spec: CommandSpec = {
  name: "migrate",
  summary: "",
  description: "",
  positionals: [{ name: "FILE", summary: "" }],
  options: [
    { name: "out", kind: "string", value: "NEW", summary: "" },
    { name: "dry-run", kind: "boolean", summary: "" },
  ],
};

const ok = (argv: string[]) => Result.getOrThrow(parseArgs(spec, argv));
const fails = (argv: string[]) =>
  assert.equal(Result.isFailure(parseArgs(spec, argv)), true, argv.join(" "));

Deno.test("parseArgs()", async (t) => {
  await t.step("reads positionals, flags and values in any order", () => {
    const parsed = ok(["--json", "a.jsonl", "--out", "b.jsonl", "--dry-run"]);
    assert.deepEqual(parsed.positionals, ["a.jsonl"]);
    assert.deepEqual([...parsed.flags].sort(), ["dry-run", "json"]);
    assert.equal(parsed.values.get("out"), "b.jsonl");
  });

  await t.step("accepts --name=value", () => {
    assert.equal(ok(["a", "--out=b"]).values.get("out"), "b");
  });

  await t.step("takes everything after -- as positionals", () => {
    assert.deepEqual(ok(["--", "--json"]).positionals, ["--json"]);
  });

  await t.step("treats -h as --help and skips the positional check", () => {
    assert.equal(ok(["-h"]).flags.has("help"), true);
  });

  await t.step("treats a negative number as a positional", () => {
    assert.deepEqual(ok(["-1"]).positionals, ["-1"]);
  });

  await t.step("refuses what the usage does not allow", () => {
    fails([]);
    fails(["a", "b"]);
    fails(["a", "--frob"]);
    fails(["a", "-x"]);
    fails(["a", "--out"]);
    fails(["a", "--out="]);
    fails(["a", "--out", "--json"]);
    fails(["a", "--json=1"]);
  });

  await t.step("a usage problem is tagged UsageError", () => {
    const result = parseArgs(spec, []);
    assert.equal(Result.isFailure(result) && result.failure._tag, "UsageError");
  });

  await t.step("usageLine() lists positionals and options", () => {
    assert.equal(
      usageLine(spec),
      "migrate FILE --out NEW [--dry-run] [--json]",
    );
  });
});
