/**
 * Replays every input the fuzzer found a bug with (tests/fixtures/fuzz/),
 * through the line-by-line decode and fold (against the reference checker)
 * and through the streaming reader, strict and with `recover`.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { Effect, Exit } from "effect";
import { readSessionBytes, surfaceNodes } from "@palimpsest/session";
import { assertAgree } from "../_helpers/fuzz_compare.ts";

/** A fixture and what reading it must give. */
interface Regression {
  /** The file under tests/fixtures/fuzz/. */
  readonly file: string;
  /** What went wrong before the fix. */
  readonly found: string;
  /** "accepted", or the rule the log breaks. */
  readonly outcome: string;
  /** The 1-based line of the failing event, when it fails. */
  readonly line?: number;
  /** The surface after reading, when accepted. */
  readonly nodes?: ReadonlyArray<number>;
}

const REGRESSIONS: ReadonlyArray<Regression> = [
  {
    file: "deep-meta-prune.jsonl",
    found:
      "a prune of a tool result whose meta nests 30k deep threw RangeError from the JSON diff",
    outcome: "accepted",
    nodes: [1],
  },
  {
    file: "deep-meta-prune-differs.jsonl",
    found: "the same diff, when the deep meta differs at the bottom",
    outcome: "ToolResultReplaceChangesMoreThanContent",
    line: 3,
  },
  {
    file: "deep-tojson-seq.jsonl",
    found:
      "an invalid seq that is a 30k-deep array ending in a toJSON key threw RangeError while the error quoted it",
    outcome: "InvalidSessionSeq",
    line: 3,
  },
];

const fixture = (file: string): Uint8Array =>
  fs.readFileSync(new URL(`../fixtures/fuzz/${file}`, import.meta.url));

for (const r of REGRESSIONS) {
  Deno.test(`regression ${r.file}: ${r.outcome}`, () => {
    const bytes = fixture(r.file);
    const lines = new TextDecoder().decode(bytes).split("\n").slice(1, -1);
    const { outcome } = assertAgree(lines.map((l) => JSON.parse(l)));
    assert.equal(outcome, r.outcome);

    const strict = Effect.runSyncExit(readSessionBytes(bytes));
    if (r.outcome === "accepted") {
      assert.ok(Exit.isSuccess(strict));
      assert.deepEqual(surfaceNodes(strict.value.session.surface), r.nodes);
      return;
    }
    assert.ok(Exit.isFailure(strict));
    const recovered = Effect.runSyncExit(
      readSessionBytes(bytes, { recover: true }),
    );
    assert.ok(Exit.isSuccess(recovered));
    const stopped = recovered.value.report.stoppedAt;
    assert.ok(stopped !== undefined && stopped._tag !== "LineTooLong");
    assert.equal(stopped.innerTag, r.outcome);
    assert.equal(stopped.line, r.line);
  });
}
