/**
 * Fuzzing the append path with values that are not JSON: random trees of
 * JSON values with, now and then, a bigint, NaN, ±Infinity, -0, undefined, a
 * function, a symbol, a class instance, a sparse array or a cycle, placed in
 * every slot of a draft that holds free JSON. A draft is either refused with
 * `InvalidEventData` at the offender's path, or accepted; an accepted event
 * reads back from its line equal to the event in memory. A session made with
 * `copyDrafts` keeps its own copy: changing the draft afterwards leaves the
 * log's line unchanged; any other takes the data as it is.
 */
import assert from "node:assert/strict";
import { Effect, Exit, Result } from "effect";
import { type EventDraft, extensionType, Session } from "@palimpsest/session";
import { decodeEventLine, encodeEventLine } from "@palimpsest/session/jsonl";
import { config, countsReport, fuzz, type Rng } from "../_helpers/fuzz.ts";
import { toolResultDraft } from "../_helpers/build.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";

class Opaque {
  readonly x = 1;
}

type Path = ReadonlyArray<string | number>;

/** A random value; `bad` collects the paths of the values that are not JSON. */
const genValue = (
  rng: Rng,
  depth: number,
  path: Path,
  bad: Path[],
  pBad: number,
): unknown => {
  if (rng.chance(pBad)) {
    bad.push(path);
    const kind = rng.int(0, 9);
    switch (kind) {
      case 0:
        return BigInt(rng.int(-5, 5));
      case 1:
        return NaN;
      case 2:
        return rng.chance(0.5) ? Infinity : -Infinity;
      case 3:
        return -0;
      case 4:
        return undefined;
      case 5:
        return () => 0;
      case 6:
        return Symbol("s");
      case 7:
        return rng.pick([new Date(0), new Map(), new Set(), new Opaque()]);
      case 8: {
        const sparse: unknown[] = [];
        sparse[2] = 1;
        return sparse;
      }
      default: {
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        return cyclic;
      }
    }
  }
  const kind = depth <= 0 ? rng.int(0, 3) : rng.int(0, 5);
  switch (kind) {
    case 0:
      return rng.pick(["", "x", "héllo", "__proto__"]);
    case 1:
      return rng.int(-1000, 1000) / rng.pick([1, 4]);
    case 2:
      return rng.chance(0.5);
    case 3:
      return null;
    case 4: {
      const out: unknown[] = [];
      for (let i = rng.int(0, 3); i > 0; i--) {
        out.push(genValue(rng, depth - 1, [...path, out.length], bad, pBad));
      }
      return out;
    }
    default: {
      const out: Record<string, unknown> = {};
      for (let i = rng.int(0, 3); i > 0; i--) {
        const key = rng.pick(["a", "b", "toJSON", "constructor", "__proto__"]);
        if (Object.hasOwn(out, key)) continue;
        Object.defineProperty(out, key, {
          value: genValue(rng, depth - 1, [...path, key], bad, pBad),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
      return out;
    }
  }
};

const header = { id: "s", createdAt: 0, isSeeded: false };

/** A draft with `value` in one of the slots that hold free JSON. */
const draftWith = (rng: Rng, value: unknown): [EventDraft, Path] => {
  switch (rng.int(0, 3)) {
    case 0: {
      const draft = toolResultDraft(0, 0, "c1", "out");
      return [{ ...draft, data: { ...Object(draft.data), meta: value } }, [
        "meta",
      ]];
    }
    case 1:
      return [{
        type: "assistant/attempt",
        data: { turn: 0, step: 0, stream: [{ time: 0, chunk: value }] },
      }, ["stream", 0, "chunk"]];
    case 2:
      return [
        { type: extensionType("x/opaque"), ignorable: true, data: value },
        [],
      ];
    default:
      return [{
        type: "request/header",
        data: {
          header: { config: { provider: "p", model: "m" } },
          reason: value,
        },
      }, ["reason"]];
  }
};

const startsWith = (path: Path, prefix: Path): boolean =>
  prefix.every((key, i) => path[i] === key);

Deno.test("fuzz: drafts holding values that are not JSON", () => {
  fuzz("drafts/non-json-values", config.runs * 4, (rng) => {
    const bad: Path[] = [];
    const value = genValue(
      rng,
      rng.int(0, 4),
      [],
      bad,
      rng.pick([0, 0.1, 0.3]),
    );
    const [draft, slot] = draftWith(rng, value);
    const copyDrafts = rng.chance(0.5);
    const exit = Effect.runSync(
      Effect.exit(
        Session.append(Session.make(header, { copyDrafts }), draft),
      ),
    );
    if (Exit.isFailure(exit)) {
      // A defect or an interruption throws here.
      const refused = failureOf(exit);
      if (value === undefined && slot.length === 0) {
        // Data that is undefined is missing: the envelope's rule.
        thenFails(refused, "InvalidEnvelope");
        return;
      }
      const error = thenFails(refused, "InvalidEventData");
      assert.ok(bad.length > 0, `refused JSON: ${error.issue}`);
      assert.ok(
        startsWith(error.path, slot),
        `the path ${JSON.stringify(error.path)} is in the slot`,
      );
      return;
    }
    assert.equal(bad.length, 0, "a value that is not JSON was accepted");
    const event = Result.getOrThrow(Session.events(exit.value))[0];
    assert.ok(event !== undefined);
    const line = encodeEventLine(event);
    const read = Result.getOrThrow(decodeEventLine(line.slice(0, -1)));
    assert.deepStrictEqual(read, event);
    const data: unknown = draft.data;
    if (!copyDrafts) {
      // The session took the data as it is.
      assert.equal(event.data, data);
      return;
    }
    // Mutating the draft leaves the log of a session that copies drafts as
    // it was.
    if (typeof data === "object" && data !== null) {
      Object.defineProperty(data, "meta", {
        value: "changed",
        enumerable: true,
        configurable: true,
      });
    }
    assert.equal(encodeEventLine(event), line);
  });
  console.log(countsReport());
});
