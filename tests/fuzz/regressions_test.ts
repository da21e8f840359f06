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
  /** Decode and fold line by line: "accepted" or the rule broken. */
  readonly outcome: string;
  /** The reader's limit to read with. */
  readonly maxLineBytes?: number;
  /** The surface after a strict read, when it succeeds. */
  readonly nodes?: ReadonlyArray<number>;
  /** Where a read with `recover` stops, when a strict read fails. */
  readonly stoppedAt?: {
    readonly tag: string;
    readonly line: number;
    readonly innerTag?: string;
  };
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
    stoppedAt: {
      tag: "FoldFailed",
      line: 3,
      innerTag: "ToolResultReplaceChangesMoreThanContent",
    },
  },
  {
    file: "deep-tojson-seq.jsonl",
    found:
      "an invalid seq that is a 30k-deep array ending in a toJSON key threw RangeError while the error quoted it",
    outcome: "InvalidSessionSeq",
    stoppedAt: { tag: "CorruptLine", line: 3, innerTag: "InvalidSessionSeq" },
  },
  {
    file: "recover-fold-line2.jsonl",
    found:
      "with recover, a fold error on line 2 failed the read instead of serving the empty prefix",
    outcome: "NonContiguousSeq",
    stoppedAt: { tag: "FoldFailed", line: 2, innerTag: "NonContiguousSeq" },
  },
  {
    file: "recover-too-long-line2.jsonl",
    found:
      "with recover, an overlong line 2 failed the read instead of serving the empty prefix",
    outcome: "accepted",
    maxLineBytes: 100,
    stoppedAt: { tag: "LineTooLong", line: 2 },
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

    const options = r.maxLineBytes === undefined
      ? {}
      : { maxLineBytes: r.maxLineBytes };
    const strict = Effect.runSyncExit(readSessionBytes(bytes, options));
    if (r.stoppedAt === undefined) {
      assert.ok(Exit.isSuccess(strict));
      assert.deepEqual(surfaceNodes(strict.value.session.surface), r.nodes);
      return;
    }
    assert.ok(Exit.isFailure(strict));
    const recovered = Effect.runSyncExit(
      readSessionBytes(bytes, { ...options, recover: true }),
    );
    assert.ok(Exit.isSuccess(recovered));
    const stopped = recovered.value.report.stoppedAt;
    assert.ok(stopped !== undefined);
    assert.deepEqual(
      {
        tag: stopped._tag,
        line: stopped.line,
        ...(stopped._tag === "LineTooLong"
          ? {}
          : { innerTag: stopped.innerTag }),
      },
      r.stoppedAt,
    );
    assert.equal(
      recovered.value.events.length,
      recovered.value.session.surface.nextSeq,
    );
  });
}
