/**
 * An answer a crash cut while it streamed, on the command line: `derive`
 * shows it after the messages (not among them), `explain` names a batch's
 * answer, and `repair --append-partial` makes it an interrupted message.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { encodeEvent } from "@palimpsest/session/schema";
import { cliInProcess as run, tempDir } from "./_cli.ts";
import { crashed } from "../_helpers/partial_stream.ts";

const crashedFile = (): string => {
  const file = path.join(tempDir(), "crashed.v3.jsonl");
  fs.writeFileSync(
    file,
    [
      '{"type":"session","version":3,"id":"s","createdAt":0,"isSeeded":false}',
      ...crashed().map((e) => JSON.stringify(encodeEvent(e))),
      "",
    ].join("\n"),
  );
  return file;
};

Deno.test("derive and explain show a partial answer as never sent to the model", async () => {
  const file = crashedFile();
  const derived = await run("derive", file);
  assert.equal(derived.code, 0);
  const lines = derived.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 3);
  assert.match(
    lines[2] ?? "",
    /^partial answer \(turn 0, step 1, seq 7, 8\), cut while it streamed, not sent to the model: .*Half an answer/,
  );
  const explained = await run("explain", file, "8");
  assert.match(
    explained.stdout,
    /a batch of a partial answer \(turn 0, step 1/,
  );
  const settled = await run("explain", file, "3");
  assert.match(settled.stdout, /a batch of an answer that settled/);
});

Deno.test("repair --append-partial appends the partial answer as an interrupted message", async () => {
  const file = crashedFile();
  const repaired = await run("repair", file, "--append-partial");
  assert.equal(repaired.code, 0, repaired.stderr);
  const derived = await run("derive", file);
  const lines = derived.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 3);
  assert.match(lines[2] ?? "", /^\[ 9\] assistant: .*Half an answer/);
});
