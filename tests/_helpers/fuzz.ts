/**
 * The fuzz harness: a seeded generator, the case runner that names the seed
 * of a failing case, the per-category counters and the properties every
 * case is checked against.
 *
 * Sizes come from the environment so that `deno task test` runs a small
 * suite and `deno task fuzz` a long one:
 *
 * - `FUZZ_SEED`: the run seed (default {@link DEFAULT_SEED}).
 * - `FUZZ_RUNS`: cases per category (default {@link DEFAULT_RUNS}, or
 *   {@link LONG_RUNS} under `FUZZ_PROFILE=long`, which `deno task fuzz`
 *   sets); heavy categories run a fraction, and some fixed case tables
 *   (numbers, nesting depths) grow with the long profile.
 * - `FUZZ_CASE`: run only this case index of every category, to replay one
 *   failure.
 *
 * @module
 */
import assert from "node:assert/strict";
import { mulberry32 } from "./workload.ts";

/** The run seed used when `FUZZ_SEED` is not set. */
export const DEFAULT_SEED = 20261202;
/** Cases per category when `FUZZ_RUNS` is not set. */
export const DEFAULT_RUNS = 150;
/** Cases per category for `deno task fuzz` (`FUZZ_PROFILE=long`). */
export const LONG_RUNS = 3000;

const envInt = (name: string): number | undefined => {
  const raw = Deno.env.get(name);
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new TypeError(
      `Expected ${name} to be a non-negative integer but found "${raw}"`,
    );
  }
  return n;
};

/** The run configuration read from the environment. */
export const config: {
  readonly seed: number;
  readonly runs: number;
  readonly only: number | undefined;
} = {
  seed: envInt("FUZZ_SEED") ?? DEFAULT_SEED,
  runs: envInt("FUZZ_RUNS") ??
    (Deno.env.get("FUZZ_PROFILE") === "long" ? LONG_RUNS : DEFAULT_RUNS),
  only: envInt("FUZZ_CASE"),
};

/** A small seeded generator (the workload's mulberry32): fast and reproducible. */
export class Rng {
  readonly #next: () => number;
  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }
  /** A float in [0, 1). */
  next(): number {
    return this.#next();
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** One element of a non-empty array. */
  pick<T>(items: ReadonlyArray<T>): T {
    const item = items[this.int(0, items.length - 1)];
    if (item === undefined) throw new RangeError("pick from an empty array");
    return item;
  }
}

/** A stable 32-bit hash of a string, to derive per-category seeds. */
const hash = (text: string): number => {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  }
  return h >>> 0;
};

/** The seed of case `index` of `category` under the run seed. */
export const caseSeed = (category: string, index: number): number =>
  (hash(category) ^ Math.imul(config.seed, 2654435761) ^
    Math.imul(index + 1, 40503)) >>> 0;

const counts = new Map<string, number>();

/**
 * Runs `runs` seeded cases of a category. A failing case is rethrown with
 * what reproduces it: the run seed and the case index.
 *
 * @param category The category name (also the counter's name).
 * @param runs How many cases.
 * @param body One case, given its generator and index.
 */
export function fuzz(
  category: string,
  runs: number,
  body: (rng: Rng, index: number) => void,
): void {
  for (let index = 0; index < runs; index++) {
    if (config.only !== undefined && index !== config.only) continue;
    const rng = new Rng(caseSeed(category, index));
    try {
      body(rng, index);
    } catch (cause) {
      throw new Error(
        `Fuzz case failed: category "${category}", case ${index}; reproduce with FUZZ_SEED=${config.seed} FUZZ_RUNS=${config.runs} FUZZ_CASE=${index}`,
        { cause },
      );
    }
    counts.set(category, (counts.get(category) ?? 0) + 1);
  }
}

/** Runs `fuzz` over a scaled-down count for expensive categories. */
export const heavyRuns = (divisor: number, min = 1): number =>
  Math.max(min, Math.floor(config.runs / divisor));

/**
 * The counters so far, one `category=count` per line, for the run log.
 *
 * @returns The counters as text.
 */
export function countsReport(): string {
  return [...counts.entries()].map(([k, v]) => `fuzz-count ${k}=${v}`).join(
    "\n",
  );
}

/** How many cases a category ran. */
export const countOf = (category: string): number => counts.get(category) ?? 0;

// ---------------------------------------------------------------------------
// Prototype snapshots

const PROTOTYPES: ReadonlyArray<[string, object]> = [
  ["Object.prototype", Object.prototype],
  ["Array.prototype", Array.prototype],
  ["Function.prototype", Function.prototype],
  ["String.prototype", String.prototype],
  ["Number.prototype", Number.prototype],
];

/** A snapshot of the built-in prototypes' own properties. */
export type ProtoSnapshot = ReadonlyArray<
  readonly [string, string | symbol, unknown]
>;

/**
 * Snapshots the own properties (and their values) of the built-in
 * prototypes, and `Object.prototype`'s own prototype.
 *
 * @returns The snapshot.
 */
export function protoSnapshot(): ProtoSnapshot {
  const out: Array<readonly [string, string | symbol, unknown]> = [];
  for (const [name, proto] of PROTOTYPES) {
    for (const key of Reflect.ownKeys(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, key);
      out.push([name, key, d?.value ?? d?.get]);
    }
    out.push([name, "[[Prototype]]", Object.getPrototypeOf(proto)]);
  }
  return out;
}

/**
 * Asserts that no built-in prototype changed since `before`.
 *
 * @param before A snapshot from {@link protoSnapshot}.
 */
export function assertProtoUnchanged(before: ProtoSnapshot): void {
  const after = protoSnapshot();
  assert.equal(after.length, before.length, "a prototype gained a property");
  for (let i = 0; i < after.length; i++) {
    const a = after[i];
    const b = before[i];
    assert.ok(a !== undefined && b !== undefined);
    assert.equal(a[0], b[0]);
    assert.equal(a[1], b[1]);
    assert.ok(Object.is(a[2], b[2]), `prototype property changed`);
  }
}

/**
 * Runs `f` and asserts that it changed no built-in prototype.
 *
 * @param f The code under watch.
 * @returns What `f` returned.
 */
export function leavesPrototypes<A>(f: () => A): A {
  const before = protoSnapshot();
  const result = f();
  assertProtoUnchanged(before);
  return result;
}

/**
 * {@link fuzz} for cases that run effects: the cases run one after another.
 *
 * @param category The category name (also the counter's name).
 * @param runs How many cases.
 * @param body One case, given its generator and index.
 */
export async function fuzzAsync(
  category: string,
  runs: number,
  body: (rng: Rng, index: number) => Promise<void>,
): Promise<void> {
  for (let index = 0; index < runs; index++) {
    if (config.only !== undefined && index !== config.only) continue;
    const rng = new Rng(caseSeed(category, index));
    try {
      await body(rng, index);
    } catch (cause) {
      throw new Error(
        `Fuzz case failed: category "${category}", case ${index}; reproduce with FUZZ_SEED=${config.seed} FUZZ_RUNS=${config.runs} FUZZ_CASE=${index}`,
        { cause },
      );
    }
    counts.set(category, (counts.get(category) ?? 0) + 1);
  }
}
