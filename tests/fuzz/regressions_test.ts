/**
 * Replays every input the fuzzer found a bug with (tests/fixtures/fuzz/),
 * through the line-by-line decode and fold (against the reference checker)
 * and through the streaming reader, strict and with `recover`.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { Cause, Effect, Exit, Result } from "effect";
import { lineage, SessionSeq } from "@palimpsest/session";
import {
  interruptedTurnClosers,
  surfaceNodes,
} from "@palimpsest/session/internal";
import {
  encodeEventLine,
  encodeHeaderLine,
  type Migration,
  type ReadOptions,
  readSessionBytes,
} from "@palimpsest/session/jsonl";
import { assertAgree } from "../_helpers/fuzz_compare.ts";
import { thenFails } from "../_helpers/then.ts";

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
  /** Writing the header and events back gives the file's bytes. */
  readonly writesBack?: boolean;
  /** Read as an older version through a pass-through migration. */
  readonly migrated?: boolean;
  /** The error of both a strict and a recovering read, when fatal. */
  readonly fatal?: {
    readonly tag: "CorruptLine";
    readonly line: number;
    readonly innerTag: string;
  };
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
  {
    file: "header-deep-tojson-id.jsonl",
    found:
      "a header whose id is a deep array ending in a toJSON key died with RangeError while InvalidHeader quoted it",
    outcome: "accepted",
    fatal: { tag: "CorruptLine", line: 1, innerTag: "InvalidHeader" },
  },
  {
    file: "source-run-deep-tojson.jsonl",
    found:
      "a stored source run that is a deep array ending in a toJSON key died with RangeError while InvalidSourceRange quoted it",
    outcome: "skip",
    stoppedAt: { tag: "CorruptLine", line: 3, innerTag: "InvalidSourceRange" },
  },
  {
    file: "migrated-deep-tojson.jsonl",
    found:
      "a migrated event that is a deep array ending in a toJSON key died with RangeError while its excerpt was made",
    outcome: "skip",
    migrated: true,
    stoppedAt: { tag: "CorruptLine", line: 3, innerTag: "InvalidEnvelope" },
  },
  {
    file: "write-back-deep-tojson.jsonl",
    found:
      "writing back a header or event whose data nests 30k deep with a toJSON key threw RangeError from JSON.stringify",
    outcome: "accepted",
    nodes: [0],
    writesBack: true,
  },
];

const passThrough: Migration<never> = (input) =>
  Effect.succeed({
    header: { id: "migrated", createdAt: 0, isSeeded: false },
    events: input.lines,
  });

const fixture = (file: string): Uint8Array =>
  fs.readFileSync(new URL(`../fixtures/fuzz/${file}`, import.meta.url));

for (const r of REGRESSIONS) {
  Deno.test(`regression ${r.file}: the reads give its recorded outcome`, () => {
    const bytes = fixture(r.file);
    const lines = new TextDecoder().decode(bytes).split("\n").slice(1, -1);
    // Stored source runs are the codec's, not the decoder's: not compared.
    if (r.outcome !== "skip") {
      const { outcome } = assertAgree(lines.map((l) => JSON.parse(l)));
      assert.equal(outcome, r.outcome);
    }

    const options: ReadOptions<never> = {
      ...(r.maxLineBytes === undefined ? {} : { maxLineBytes: r.maxLineBytes }),
      ...(r.migrated === true ? { migrate: passThrough } : {}),
    };
    const strict = Effect.runSyncExit(readSessionBytes(bytes, options));
    if (r.fatal !== undefined) {
      for (const recover of [false, true]) {
        const exit = Effect.runSyncExit(
          readSessionBytes(bytes, { ...options, recover }),
        );
        assert.ok(Exit.isFailure(exit));
        assert.ok(!Cause.hasDies(exit.cause));
        const found = Cause.findError(exit.cause);
        assert.ok(Result.isSuccess(found));
        thenFails(found.success, r.fatal.tag, {
          line: r.fatal.line,
          innerTag: r.fatal.innerTag,
        });
      }
      return;
    }
    if (r.stoppedAt === undefined) {
      assert.ok(Exit.isSuccess(strict));
      assert.deepEqual(surfaceNodes(strict.value.session.surface), r.nodes);
      if (r.writesBack === true) {
        const text = encodeHeaderLine(strict.value.session.header) +
          strict.value.events.map((e) => encodeEventLine(e)).join("");
        assert.equal(text, new TextDecoder().decode(bytes));
      }
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

Deno.test("regression window-last-safe-seq.events.jsonl: no closers past the last safe seq", () => {
  // Event lines of a window starting at 2^53 - 1 (no header: a file always
  // starts at seq 0). Found by the fuzzer: interruptedTurnClosers threw from
  // SessionSeq.make when the closers' seqs would pass the last safe integer.
  const text = new TextDecoder().decode(
    fixture("window-last-safe-seq.events.jsonl"),
  );
  const values = text.split("\n").slice(0, -1).map((l) => JSON.parse(l));
  const { outcome, library } = assertAgree(values, Number.MAX_SAFE_INTEGER);
  assert.equal(outcome, "accepted");
  assert.deepEqual(interruptedTurnClosers(library.events), []);
});

Deno.test("regression lineage-chain-10k.jsonl: lineage follows a chain deeper than the call stack", () => {
  // Found by the fuzzer: lineage recursed once per level and threw
  // RangeError on a chain of 10k replacements, each citing the one before.
  const exit = Effect.runSyncExit(
    readSessionBytes(fixture("lineage-chain-10k.jsonl")),
  );
  assert.ok(Exit.isSuccess(exit));
  const session = exit.value.session;
  const tree = Result.getOrThrow(lineage(session, SessionSeq.make(10000)));
  assert.ok(tree !== undefined);
  let depth = 0;
  for (let node = tree; node.sources[0] !== undefined; depth++) {
    node = node.sources[0];
  }
  assert.equal(depth, 10000);
});
