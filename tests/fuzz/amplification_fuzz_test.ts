/**
 * Fuzzing amplification: small inputs whose numbers ask for huge
 * allocations (source runs up to 2^53, runs citing the whole log on every
 * line, nesting up to a million deep). Each input is verified by the
 * real CLI in a subprocess whose V8 heap is capped at {@link HEAP_MB} MB: a
 * run past the cap dies, so a case passes only when the refusal (or the
 * acceptance) fits under it, with the usual tagged error and line.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { countsReport, fuzz, heavyRuns, type Rng } from "../_helpers/fuzz.ts";
import {
  HEADER,
  LAST_SAFE,
  userLine,
  verifyProcess,
} from "../_helpers/amplification_inputs.ts";

/** The V8 heap ceiling of each subprocess, in MB. */
const HEAP_MB = 64;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "amplification-"));

interface Verdict {
  readonly code: number;
  readonly tag: string | undefined;
  readonly line: number | undefined;
}

const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u);

/** `verify FILE --json` under the heap ceiling. */
const verify = (lines: ReadonlyArray<string>): Verdict => {
  const file = path.join(dir, "case.jsonl");
  fs.writeFileSync(file, `${[HEADER, ...lines].join("\n")}\n`);
  const output = verifyProcess(file, {
    denoFlags: [`--v8-flags=--max-old-space-size=${HEAP_MB}`],
  });
  const stderr = new TextDecoder().decode(output.stderr);
  assert.ok(
    output.code === 0 || output.code === 1,
    `verify exited ${output.code} (over the ${HEAP_MB} MB heap?): ${
      stderr.slice(0, 400)
    }`,
  );
  const report: unknown = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.ok(isObject(report));
  const error = report.error;
  if (!isObject(error)) return { code: output.code, tag: undefined, line: 0 };
  return {
    code: output.code,
    tag: typeof error.tag === "string" ? error.tag : undefined,
    line: typeof error.line === "number" ? error.line : undefined,
  };
};

Deno.test("fuzz: a source run never expands past what the line can cite", () => {
  fuzz("amplification/source-runs", heavyRuns(30, 3), (rng: Rng) => {
    const before = rng.int(0, 5);
    const lines: string[] = [];
    for (let k = 0; k < before; k++) lines.push(userLine(k));
    const seqKind = rng.int(0, 5);
    const seq: unknown = [
      "x",
      -1,
      1.5,
      null,
      LAST_SAFE,
      before + rng.int(1, 1_000_000),
    ][seqKind];
    const runs: unknown[] = [];
    let at = rng.int(0, 2);
    for (let r = rng.int(1, 3); r > 0; r--) {
      const end = at + rng.int(2, LAST_SAFE - 2 - at);
      runs.push([at, Math.min(end, LAST_SAFE - 1)]);
      at = Math.min(end, LAST_SAFE - 1) + 2;
      if (at >= LAST_SAFE - 4) break;
    }
    lines.push(userLine(seq, runs));
    const verdict = verify(lines);
    assert.equal(verdict.code, 1);
    assert.equal(
      verdict.tag,
      seqKind < 4 ? "InvalidSessionSeq" : "InvalidSourceRange",
    );
    assert.equal(verdict.line, before + 2);
  });
});

Deno.test("fuzz: runs citing the whole log on every line stay bounded", () => {
  fuzz("amplification/quadratic-runs", heavyRuns(50, 2), (rng: Rng) => {
    const n = rng.int(500, 4000);
    const lines: string[] = [];
    for (let k = 0; k < n; k++) {
      lines.push(userLine(k, k >= 3 ? [[0, k - 1]] : undefined));
    }
    const verdict = verify(lines);
    // A short log is valid; past the budget a line is refused, never more.
    if (verdict.code === 1) assert.equal(verdict.tag, "InvalidSourceRange");
    else assert.ok(n * n / 2 <= 1 << 17);
  });
});

const nested = (rng: Rng, depth: number): string => {
  const [open, close] = rng.pick([
    ["[", "]"],
    ['{"a":', "}"],
    ["[1,", "]"],
  ]);
  return `${open.repeat(depth)}0${close.repeat(depth)}`;
};

Deno.test("fuzz: nesting is counted before it is parsed", () => {
  fuzz("amplification/nesting", heavyRuns(50, 3), (rng: Rng) => {
    const depth = rng.int(5_000, 1_000_000);
    const value = nested(rng, depth);
    const slot = rng.int(0, 3);
    const line = [
      `{"type":"turn/start","seq":0,"time":0,"data":{"turn":${value}}}`,
      `{"type":"x/y","seq":0,"time":0,"ignorable":true,"data":${value}}`,
      `{"type":"turn/start","seq":${value},"time":0,"data":{"turn":0}}`,
      `{"type":"user/message","seq":0,"time":0,"data":{"id":"m","role":"user","content":[],"source":{"kind":"user"}},"surfaceOp":"append","sourceEventSeqs":${value}}`,
    ][slot];
    assert.ok(line !== undefined);
    const verdict = verify([line]);
    if (line.length > 64 * 1024) {
      // Counted before parsing: refused whatever the slot.
      assert.equal(verdict.code, 1);
      assert.equal(verdict.tag, "TooManyContainers");
      assert.equal(verdict.line, 2);
    } else if (slot === 1) assert.equal(verdict.code, 0);
    else {
      assert.equal(verdict.code, 1);
      assert.equal(verdict.line, 2);
      assert.notEqual(verdict.tag, "InternalError");
    }
  });
  console.log(countsReport());
  fs.rmSync(dir, { recursive: true, force: true });
});
