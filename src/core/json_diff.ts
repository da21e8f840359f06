/**
 * Where two JSON values differ, ignoring the value at one path: what the
 * fold asks of a tool result's replacement (only the block's inner content
 * may change). Equal values of modest depth are told by a recursive walk
 * that allocates nothing; any other pair by an iterative walk, so a deeply
 * nested value cannot overflow the call stack, which finds the path.
 *
 * @module
 * @internal
 */
import { isObject } from "./json.ts";

/** A member of an object or an element of an array; undefined otherwise. */
const member = (value: unknown, key: string | number): unknown =>
  typeof value === "object" && value !== null
    ? Reflect.get(value, key)
    : undefined;

/** A path into a JSON value: object keys and array indices. */
export type JsonPath = Array<string | number>;

interface DiffFrame {
  readonly a: unknown;
  readonly b: unknown;
  readonly keys: ReadonlyArray<string | number>;
  next: number;
  /** Whether this frame's path is a prefix of the skipped path. */
  readonly onSkip: boolean;
}

const definedKeys = (
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): string[] => {
  const keys: string[] = [];
  for (const k of Object.keys(a)) if (a[k] !== undefined) keys.push(k);
  for (const k of Object.keys(b)) {
    if (b[k] !== undefined && (a[k] === undefined || !Object.hasOwn(a, k))) {
      keys.push(k);
    }
  }
  return keys;
};

// Read in the loops below as `for...in` guards, which the engine compiles
// to a check of the loop's own key cache.
const hasOwn = Object.prototype.hasOwnProperty;

/** Depth past which {@link sameJson} leaves the pair to the walk. */
const SAME_DEPTH = 32;

/**
 * Whether `a` and `b` (met at `depth`, on the skipped path while `onSkip`)
 * are equal by {@link jsonDiffWalk}'s rules: false also when they nest past
 * {@link SAME_DEPTH}, for the walk to decide. Recursive and allocation-free:
 * what nearly every replace of a tool result asks is that nothing but its
 * content changed.
 */
const sameJson = (
  a: unknown,
  b: unknown,
  skip: ReadonlyArray<string | number>,
  depth: number,
  onSkip: boolean,
): boolean => {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (a === null || b === null || depth >= SAME_DEPTH) return false;
  const last = skip.length - 1;
  const arrayA = Array.isArray(a);
  if (arrayA || Array.isArray(b)) {
    if (!arrayA || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      const skipped = onSkip && skip[depth] === i;
      if (skipped && depth === last) continue;
      if (!sameJson(a[i], b[i], skip, depth + 1, skipped)) return false;
    }
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  // Own keys with a defined value, as definedKeys lists them.
  for (const key in ra) {
    const value = ra[key];
    if (value === undefined || !hasOwn.call(ra, key)) continue;
    const skipped = onSkip && skip[depth] === key;
    if (skipped && depth === last) continue;
    if (!sameJson(value, rb[key], skip, depth + 1, skipped)) return false;
  }
  for (const key in rb) {
    const value = rb[key];
    if (value === undefined || !hasOwn.call(rb, key)) continue;
    if (ra[key] !== undefined && hasOwn.call(ra, key)) continue;
    const skipped = onSkip && skip[depth] === key;
    if (skipped && depth === last) continue;
    if (!sameJson(ra[key], value, skip, depth + 1, skipped)) return false;
  }
  return true;
};

/**
 * The first path where two JSON values differ, ignoring the value at `skip`,
 * or undefined when they are equal. Equal values of modest depth are told
 * by a recursive walk that allocates nothing; any other pair goes to
 * {@link jsonDiffWalk}, which finds the path.
 * @internal
 */
export const jsonDiff = (
  a0: unknown,
  b0: unknown,
  skip: ReadonlyArray<string | number>,
): JsonPath | undefined =>
  sameJson(a0, b0, skip, 0, skip.length > 0)
    ? undefined
    : jsonDiffWalk(a0, b0, skip);

/**
 * {@link jsonDiff} by one iterative walk, so a deeply nested value cannot
 * overflow the call stack; it allocates no path unless the values differ.
 * @internal
 */
export const jsonDiffWalk = (
  a0: unknown,
  b0: unknown,
  skip: ReadonlyArray<string | number>,
): JsonPath | undefined => {
  const stack: DiffFrame[] = [];
  const path = (): JsonPath =>
    stack.map((frame) => frame.keys[frame.next - 1] ?? "");
  // Pushes a frame for the pair, or says whether they are equal leaves.
  const open = (a: unknown, b: unknown, onSkip: boolean): boolean => {
    if (Object.is(a, b)) return true;
    const arrayA = Array.isArray(a);
    const arrayB = Array.isArray(b);
    if (arrayA || arrayB) {
      if (!arrayA || !arrayB || a.length !== b.length) return false;
      const keys: number[] = [];
      for (let i = 0; i < a.length; i++) keys.push(i);
      stack.push({ a, b, keys, next: 0, onSkip });
      return true;
    }
    if (!isObject(a) || !isObject(b)) return false;
    stack.push({ a, b, keys: definedKeys(a, b), next: 0, onSkip });
    return true;
  };
  if (!open(a0, b0, skip.length > 0)) return [];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    if (frame === undefined) break;
    if (frame.next >= frame.keys.length) {
      stack.pop();
      continue;
    }
    const key = frame.keys[frame.next++];
    if (key === undefined) continue;
    const depth = stack.length - 1;
    const onSkip = frame.onSkip && skip[depth] === key;
    if (onSkip && depth === skip.length - 1) continue;
    const a = member(frame.a, key);
    const b = member(frame.b, key);
    if (!open(a, b, onSkip)) return [...path()];
  }
  return undefined;
};
