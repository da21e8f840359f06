import assert from "node:assert/strict";
import fc from "fast-check";
import { Rng } from "../_helpers/fuzz.ts";
import { genValidLog, toLines } from "../_helpers/fuzz_logs.ts";
import { headerLine } from "../_helpers/build.ts";
import { denoOkSync } from "../_helpers/deno_run.ts";
import { Result } from "effect";
import {
  deriveMessages,
  deriveMessagesWithSources,
  emptySurface,
  type SessionEvent,
  type Surface,
} from "@palimpsest/session";
import {
  applyEventResult,
  emptySurfaceAt,
  logEvent,
  surfaceEvent,
  surfaceNodes,
} from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { encodeEvent } from "@palimpsest/session/schema";
import {
  assistant,
  decoded,
  type Raw,
  replace,
  s,
  user,
} from "../_helpers/build.ts";
import {
  applyStep,
  type Command,
  commandArb,
  emptyModel,
  type GeneratedLog,
  logArb,
  type Model,
  nextSeqOf,
  stepAt,
  stepsFor,
} from "../_helpers/log_gen.ts";

const SEED = 20261202;
const params = (numRuns: number): fc.Parameters<unknown> => ({
  seed: SEED,
  numRuns,
});

const startOf = (log: GeneratedLog): Surface =>
  log.base === 0 ? emptySurface : emptySurfaceAt(s(log.base));

const foldAll = (
  events: ReadonlyArray<SessionEvent>,
  from: Surface,
): Surface => {
  const result = replayResult(events, from);
  if (Result.isFailure(result)) {
    assert.fail(
      `Expected a generated log to fold but got ${result.failure.error._tag}`,
    );
  }
  return result.success;
};

/** Everything observable about a surface, as comparable data. */
const observe = (surface: Surface) => ({
  baseSeq: surface.baseSeq,
  nextSeq: surface.nextSeq,
  length: surface.length,
  replacements: surface.replacements,
  head: surface.head,
  tail: surface.tail,
  nodes: surfaceNodes(surface),
  derived: JSON.stringify(deriveMessagesWithSources(surface)),
});

/** Checks a surface against the naive model, reading every seq. */
const assertMatches = (surface: Surface, model: Model): void => {
  const next = nextSeqOf(model);
  assert.deepEqual(surfaceNodes(surface), model.nodes);
  assert.equal(surface.nextSeq, next);
  assert.equal(surface.baseSeq, model.base);
  assert.equal(surface.length, model.nodes.length);
  assert.equal(surface.replacements, model.replacements);
  assert.equal(surface.head, model.nodes[0]);
  assert.equal(surface.tail, model.nodes[model.nodes.length - 1]);
  const on = new Set(model.nodes);
  for (let seq = Math.max(0, model.base - 1); seq <= next; seq++) {
    const step = stepAt(model, seq);
    const event = logEvent(surface, s(seq));
    assert.equal(event?.seq, step === undefined ? undefined : seq);
    assert.equal(event?.type, step?.type);
    assert.equal(
      surfaceEvent(surface, s(seq))?.seq,
      on.has(seq) ? seq : undefined,
    );
  }
  assert.deepEqual(
    deriveMessagesWithSources(surface).map((m) => m.seq),
    model.nodes.filter((n) => stepAt(model, n)?.derives === true),
  );
};

Deno.test("the generated logs fold to the naive model's surface", () => {
  fc.assert(
    fc.property(logArb(), (log) => {
      const surface = foldAll(log.lines.map((l) => decoded(l)), startOf(log));
      assertMatches(surface, log.model);
    }),
    params(200),
  );
});

Deno.test("replay is deterministic across processes, byte for byte", () => {
  // Two fresh processes replay the same files: whatever a replay decides
  // (surface, replacements, derived messages, transcript, encoded lines)
  // must come out byte-identical, so nothing may depend on the process
  // (hash seeds, timing, iteration order of a reused cache).
  const dir = Deno.makeTempDirSync({ prefix: "replay-" });
  const files: string[] = [];
  for (let i = 0; i < 40; i++) {
    const log = genValidLog(new Rng(1000 + i), 5 + (i * 7) % 60);
    const file = `${dir}/log-${i}.jsonl`;
    Deno.writeTextFileSync(
      file,
      headerLine(`replay-${i}`) + toLines(log.events),
    );
    files.push(file);
  }
  const printer = new URL("../_helpers/replay_print.ts", import.meta.url)
    .pathname;
  const run = (): string =>
    denoOkSync(["run", "--allow-read", printer, ...files]);
  const a = run();
  const b = run();
  Deno.removeSync(dir, { recursive: true });
  assert.ok(a.split("\n").length > 40 * 5, "every log was printed");
  assert.ok(a === b, "two processes replayed the same files differently");
});

Deno.test("folding a ++ b equals folding b onto the fold of a", () => {
  fc.assert(
    fc.property(logArb(), fc.nat(), fc.nat(), (log, i, j) => {
      const events = log.lines.map((l) => decoded(l));
      const cut1 = i % (events.length + 1);
      const cut2 = cut1 + j % (events.length - cut1 + 1);
      const whole = foldAll(events, startOf(log));
      const a = foldAll(events.slice(0, cut1), startOf(log));
      const ab = foldAll(events.slice(cut1, cut2), a);
      const abc = foldAll(events.slice(cut2), ab);
      assert.deepEqual(observe(abc), observe(whole));
      // The intermediate surfaces still read as their own prefixes.
      assertMatches(a, log.models[cut1 - 1] ?? emptyModel(log.base));
      assertMatches(ab, log.models[cut2 - 1] ?? emptyModel(log.base));
      // With no events the fold returns its input.
      assert.equal(foldAll([], abc), abc);
    }),
    params(150),
  );
});

Deno.test("surface seqs are unique and every node is a surface event", () => {
  fc.assert(
    fc.property(logArb(), (log) => {
      const surface = foldAll(log.lines.map((l) => decoded(l)), startOf(log));
      const nodes = surfaceNodes(surface);
      assert.equal(new Set(nodes).size, nodes.length);
      for (const n of nodes) {
        assert.notEqual(surfaceEvent(surface, n), undefined);
      }
    }),
    params(100),
  );
});

Deno.test("encode and decode round-trip every generated line byte for byte", () => {
  fc.assert(
    fc.property(logArb(), (log) => {
      for (const raw of log.lines) {
        const line = JSON.stringify(raw);
        const event = decoded(JSON.parse(line));
        assert.equal(JSON.stringify(encodeEvent(event)), line);
        const again = decoded(encodeEvent(event));
        assert.equal(JSON.stringify(encodeEvent(again)), line);
      }
    }),
    params(100),
  );
});

Deno.test("derived messages never include shadowed nodes", () => {
  fc.assert(
    fc.property(logArb(), (log) => {
      const surface = foldAll(log.lines.map((l) => decoded(l)), startOf(log));
      const shadowed = new Set(log.model.shadowed);
      const derived = deriveMessagesWithSources(surface);
      for (const { seq } of derived) assert.equal(shadowed.has(seq), false);
      const on = new Set<number>(surfaceNodes(surface));
      for (const seq of shadowed) assert.equal(on.has(seq), false);
      assert.equal(derived.length, deriveMessages(surface).length);
    }),
    params(100),
  );
});

/** A decodable event that the fold must refuse on the model's surface. */
const badLine = (model: Model, which: number): Raw => {
  const seq = nextSeqOf(model);
  const nodes = model.nodes;
  const first = nodes[0];
  const last = nodes[nodes.length - 1];
  if (first === undefined || last === undefined || which % 4 === 0) {
    return user(seq + 1 + (which % 3));
  }
  if (which % 4 === 1) return assistant(seq, { op: replace(first, last) });
  if (which % 4 === 2 && first !== last) {
    return user(seq, { op: replace(last, first), sources: [...nodes] });
  }
  const off = model.shadowed[which % Math.max(model.shadowed.length, 1)];
  if (off !== undefined) {
    return user(seq, { op: replace(off, last), sources: [off, ...nodes] });
  }
  if (first === last) return assistant(seq, { op: replace(first, last) });
  return user(seq, { op: replace(first, last), sources: nodes.slice(1) });
};

Deno.test("a rejected event changes nothing", () => {
  fc.assert(
    fc.property(logArb(), fc.nat(), (log, which) => {
      const surface = foldAll(log.lines.map((l) => decoded(l)), startOf(log));
      const before = observe(surface);
      const result = applyEventResult(
        surface,
        decoded(badLine(log.model, which)),
      );
      assert.equal(Result.isFailure(result), true);
      assert.deepEqual(observe(surface), before);
      assertMatches(surface, log.model);
    }),
    params(150),
  );
});

// ---------------------------------------------------------------------------
// Model-based: many versions held, branched, read in random order.

type Action =
  | {
    readonly kind: "extend";
    readonly from: number;
    readonly command: Command;
  }
  | {
    readonly kind: "batch";
    readonly from: number;
    readonly commands: ReadonlyArray<Command>;
    readonly failing: boolean;
    readonly which: number;
  }
  | { readonly kind: "bad"; readonly from: number; readonly which: number }
  | { readonly kind: "read"; readonly from: number };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("extend" as const),
      from: fc.nat(),
      command: commandArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("batch" as const),
      from: fc.nat(),
      commands: fc.array(commandArb, { maxLength: 12, size: "max" }),
      failing: fc.boolean(),
      which: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("bad" as const),
      from: fc.nat(),
      which: fc.nat(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("read" as const),
      from: fc.nat(),
    }),
  },
);

interface Version {
  readonly surface: Surface;
  readonly model: Model;
}

/** Picks mostly recent versions, sometimes very old ones. */
const pick = (versions: ReadonlyArray<Version>, n: number): Version => {
  const index = n % 3 === 0
    ? n % versions.length
    : versions.length - 1 - (n % Math.min(versions.length, 4));
  const version = versions[index];
  if (version === undefined) throw new Error("Test bug: no version");
  return version;
};

const runActions = (
  base: number,
  actions: ReadonlyArray<Action>,
  order: ReadonlyArray<number>,
): void => {
  const start = base === 0 ? emptySurface : emptySurfaceAt(s(base));
  const versions: Version[] = [{ surface: start, model: emptyModel(base) }];
  for (const action of actions) {
    const version = pick(versions, action.from);
    switch (action.kind) {
      case "read":
        assertMatches(version.surface, version.model);
        break;
      case "bad": {
        const result = applyEventResult(
          version.surface,
          decoded(badLine(version.model, action.which)),
        );
        assert.equal(Result.isFailure(result), true);
        assertMatches(version.surface, version.model);
        break;
      }
      case "extend": {
        let { surface, model } = version;
        for (const step of stepsFor(model, action.command)) {
          const result = applyEventResult(surface, decoded(step.raw));
          if (Result.isFailure(result)) {
            assert.fail(
              `Expected a valid step to fold but got ${result.failure._tag}`,
            );
          }
          surface = result.success;
          model = applyStep(model, step);
          versions.push({ surface, model });
        }
        break;
      }
      case "batch": {
        let model = version.model;
        const events: SessionEvent[] = [];
        for (const command of action.commands) {
          for (const step of stepsFor(model, command)) {
            model = applyStep(model, step);
            events.push(decoded(step.raw));
          }
        }
        if (action.failing) {
          events.push(decoded(badLine(model, action.which)));
        }
        const result = replayResult(events, version.surface);
        if (action.failing) {
          if (Result.isSuccess(result)) {
            assert.fail("Expected the batch to fail");
          }
          assertMatches(result.failure.surface, model);
          versions.push({ surface: result.failure.surface, model });
        } else {
          if (Result.isFailure(result)) {
            assert.fail(
              `Expected the batch to fold but got ${result.failure.error._tag}`,
            );
          }
          versions.push({ surface: result.success, model });
        }
        // The version it started from is untouched.
        assertMatches(version.surface, version.model);
        break;
      }
    }
  }
  // Read every version held, in a random order, after all the others grew.
  for (const i of order) {
    const version = versions[i % versions.length];
    if (version !== undefined) assertMatches(version.surface, version.model);
  }
  for (let i = versions.length - 1; i >= 0; i--) {
    const version = versions[i];
    if (version !== undefined) assertMatches(version.surface, version.model);
  }
};

Deno.test("persistent surfaces match the naive model across branches and old reads", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(0, 0, 3),
      fc.array(actionArb, { minLength: 1, maxLength: 80, size: "max" }),
      fc.array(fc.nat(), { maxLength: 40, size: "max" }),
      runActions,
    ),
    params(150),
  );
});

Deno.test("a version branched many times keeps every branch readable", () => {
  // A fixed, adversarial interleaving: one root, many children, each child
  // extended, then the root and the children read back in reverse.
  let model = emptyModel();
  const root: Version[] = [];
  let surface = emptySurface;
  for (let i = 0; i < 30; i++) {
    const command: Command = i % 4 === 3
      ? { kind: "replace", a: i, b: i * 7, extra: i }
      : { kind: "result", pick: i, big: false };
    for (const step of stepsFor(model, command)) {
      model = applyStep(model, step);
      const result = applyEventResult(surface, decoded(step.raw));
      if (Result.isFailure(result)) assert.fail(result.failure._tag);
      surface = result.success;
      root.push({ surface, model });
    }
  }
  const branches: Version[] = [];
  root.forEach((version, i) => {
    let { surface: branch, model: branchModel } = version;
    for (let k = 0; k < 3; k++) {
      const command: Command = {
        kind: "replace",
        a: i + k,
        b: i * 3 + k,
        extra: k,
      };
      for (const step of stepsFor(branchModel, command)) {
        branchModel = applyStep(branchModel, step);
        const result = applyEventResult(branch, decoded(step.raw));
        if (Result.isFailure(result)) assert.fail(result.failure._tag);
        branch = result.success;
        branches.push({ surface: branch, model: branchModel });
      }
    }
  });
  for (const version of [...root].reverse()) {
    assertMatches(version.surface, version.model);
  }
  for (let i = 0; i < branches.length; i += 7) {
    const version = branches[i];
    if (version !== undefined) assertMatches(version.surface, version.model);
  }
  for (const version of branches.reverse()) {
    assertMatches(version.surface, version.model);
  }
});
