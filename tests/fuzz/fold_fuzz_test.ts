/**
 * Fuzzing the decoder and the fold against the reference checker: random
 * valid logs (whole logs and windows) must be accepted by both with the same
 * surface, and every single mutation of one event must be judged the same
 * way by both (accept/reject, index, seq, tag, fields). Aimed mutations must
 * hit their rule, and every tag of both unions must be hit.
 */
import assert from "node:assert/strict";
import {
  config,
  countOf,
  countsReport,
  fuzz,
  heavyRuns,
  type Rng,
} from "../_helpers/fuzz.ts";
import { type GenLog, genValidLog } from "../_helpers/fuzz_logs.ts";
import { mutate, MUTATION_NAMES } from "../_helpers/fuzz_mutations.ts";
import {
  assertAgree,
  DECODE_TAGS,
  type Extensions,
  FOLD_TAGS,
  startSurface,
} from "../_helpers/fuzz_compare.ts";
import { Schema } from "effect";
import { makeVocabulary, type Surface } from "@palimpsest/session";
import { applyEventResult, surfaceNodes } from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { decodeEventResult } from "@palimpsest/session/schema";
import { Result } from "effect";
import { checkLog } from "../_helpers/reference_checker.ts";

const randomLog = (rng: Rng): GenLog => {
  const length = rng.int(1, 40);
  const base = rng.chance(0.3) ? rng.int(1, 500) : 0;
  return genValidLog(rng, length, base);
};

const outcomes = new Map<string, number>();
const note = (tag: string): void => {
  outcomes.set(tag, (outcomes.get(tag) ?? 0) + 1);
};

Deno.test("fuzz: random valid logs are accepted by the library and the checker alike", () => {
  fuzz("fold/valid-log", config.runs, (rng) => {
    const log = randomLog(rng);
    const { outcome } = assertAgree(log.events, log.base);
    assert.equal(outcome, "accepted");
  });
});

Deno.test("fuzz: long valid logs with many replacements agree", () => {
  fuzz("fold/long-valid-log", heavyRuns(15), (rng) => {
    const log = genValidLog(rng, rng.int(200, 400), rng.chance(0.5) ? 0 : 77);
    assert.equal(assertAgree(log.events, log.base).outcome, "accepted");
  });
});

Deno.test("fuzz: every single mutation of one event is judged alike", () => {
  const runs = config.runs * 4;
  fuzz("fold/single-mutation", runs, (rng, index) => {
    const name = MUTATION_NAMES[index % MUTATION_NAMES.length] ?? "";
    for (let attempt = 0; attempt < 20; attempt++) {
      const log = randomLog(rng);
      const mutant = mutate(rng, log, name);
      if (mutant === undefined) continue;
      const { outcome, library } = assertAgree(mutant.events, mutant.base);
      note(outcome);
      if (mutant.expect !== undefined) {
        assert.equal(outcome, mutant.expect, `mutation ${mutant.name}`);
        assert.ok(!library.ok && library.index === mutant.at);
      }
      return;
    }
  });
  if (config.only === undefined && config.runs >= 50) {
    const missing = [...DECODE_TAGS, ...FOLD_TAGS].filter((tag) =>
      !outcomes.has(tag)
    );
    assert.deepEqual(missing, [], "every rule of docs/format.md was hit");
  }
  console.log(
    [...outcomes.entries()].sort().map(([k, v]) => `fuzz-outcome ${k}=${v}`)
      .join("\n"),
  );
  console.log(countsReport());
  assert.ok(countOf("fold/single-mutation") > 0 || config.only !== undefined);
});

const extensions: Extensions = {
  vocabulary: makeVocabulary({
    "harness/checkpoint": Schema.Struct({ label: Schema.String }),
  }),
  checker: {
    "harness/checkpoint": (d) =>
      typeof d === "object" && d !== null && !Array.isArray(d) &&
      "label" in d && typeof d.label === "string",
  },
};

Deno.test("fuzz: a caller's extra log-only types follow the same rules", () => {
  fuzz("fold/vocabulary", config.runs, (rng) => {
    const log = randomLog(rng);
    const events = log.events.map((e) => ({ ...e }));
    // Turn a few events into the extra type, some of them broken.
    for (let k = rng.int(1, 3); k > 0; k--) {
      const at = rng.int(0, events.length - 1);
      const e = events[at];
      if (e === undefined) continue;
      const extra: Record<string, unknown> = {
        type: "harness/checkpoint",
        seq: e.seq,
        time: e.time,
        data: rng.chance(0.8) ? { label: "x", more: 1 } : { label: 5 },
      };
      if (rng.chance(0.1)) extra.surfaceOp = "append";
      if (rng.chance(0.1)) extra.sourceEventSeqs = [0];
      if (rng.chance(0.1)) extra.ignorable = true;
      events[at] = extra;
    }
    const withVocabulary = assertAgree(events, log.base, extensions);
    note(`vocabulary:${withVocabulary.outcome}`);
    // Without the vocabulary the type is unknown (or opaque when ignorable).
    assertAgree(events, log.base);
  });
  console.log(
    [...outcomes.entries()].filter(([k]) => k.startsWith("vocabulary:"))
      .sort().map(([k, v]) => `fuzz-outcome ${k}=${v}`).join("\n"),
  );
  console.log(countsReport());
});

Deno.test("fuzz: old surfaces stay valid however versions are revisited", () => {
  fuzz("fold/persistent-versions", heavyRuns(3), (rng) => {
    const log = randomLog(rng);
    const values = log.events;
    const decoded = values.map((v) => {
      const r = decodeEventResult(v);
      assert.ok(Result.isSuccess(r));
      return r.success;
    });
    // expected[k]: the checker's surface after k events.
    const expected: number[][] = [];
    for (let k = 0; k <= values.length; k++) {
      expected.push([...checkLog(values.slice(0, k), log.base).nodes]);
    }
    // versions[k]: every library surface known to stand after k events.
    const versions: Surface[][] = [[startSurface(log.base)]];
    for (let k = 0; k < decoded.length; k++) {
      const before = versions[k]?.[0];
      const event = decoded[k];
      assert.ok(before !== undefined && event !== undefined);
      const next = applyEventResult(before, event);
      assert.ok(Result.isSuccess(next));
      versions.push([next.success]);
    }
    for (let op = 0; op < 60; op++) {
      const k = rng.int(0, values.length);
      const atK = versions[k] ?? [];
      const surface = rng.pick(atK);
      if (rng.chance(0.5)) {
        assert.deepEqual([...surfaceNodes(surface)], expected[k]);
        continue;
      }
      // Fold on from an old version: a branch that must match the checker.
      const m = rng.int(k, values.length);
      const folded = replayResult(decoded.slice(k, m), surface);
      assert.ok(Result.isSuccess(folded));
      assert.deepEqual([...surfaceNodes(folded.success)], expected[m]);
      versions[m]?.push(folded.success);
      // A candidate that fails leaves the old version as it was.
      const wrong = decoded[Math.max(0, k - 1)];
      if (wrong !== undefined && k > 0) {
        assert.ok(Result.isFailure(applyEventResult(surface, wrong)));
        assert.deepEqual([...surfaceNodes(surface)], expected[k]);
      }
    }
  });
  console.log(countsReport());
});
