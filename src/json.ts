/**
 * The JSON utilities the library shares: telling a JSON object from other
 * values, finding where two JSON values differ, and writing JSON text that
 * does not depend on the call stack. Deeply nested data is legal input, so
 * the diff and the writer are iterative.
 *
 * @module
 */

/**
 * Whether a value is a JSON object: not `null`, not an array.
 * @internal
 */
export const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u);

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

/**
 * The first path where two JSON values differ, ignoring the value at `skip`,
 * or undefined when they are equal. Iterative, so a deeply nested value
 * cannot overflow the call stack, and it allocates no path unless the values
 * differ.
 * @internal
 */
export const jsonDiff = (
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

// ---------------------------------------------------------------------------
// JSON text that does not depend on the call stack

type Task =
  | { readonly text: string; readonly closes?: object }
  | { readonly value: unknown };

/** What JSON.stringify does with a value before writing it. */
const toJsonValue = (value: unknown, key: string): unknown => {
  if (typeof value === "object" && value !== null) {
    const toJSON: unknown = Reflect.get(value, "toJSON");
    if (typeof toJSON === "function") {
      const converted: unknown = Reflect.apply(toJSON, value, [key]);
      return converted;
    }
  }
  return value;
};

const skipped = (value: unknown): boolean =>
  value === undefined || typeof value === "function" ||
  typeof value === "symbol";

/**
 * JSON.stringify's output, built with an explicit stack.
 * @internal
 */
export const stringifyIteratively = (root: unknown): string => {
  const out: string[] = [];
  const open = new Set<object>();
  const stack: Task[] = [{ value: toJsonValue(root, "") }];
  for (;;) {
    const task = stack.pop();
    if (task === undefined) return out.join("");
    if ("text" in task) {
      out.push(task.text);
      if (task.closes !== undefined) open.delete(task.closes);
      continue;
    }
    const value = task.value;
    if (typeof value === "bigint") {
      throw new TypeError("Do not know how to serialize a BigInt");
    }
    if (typeof value !== "object" || value === null) {
      out.push(JSON.stringify(value) ?? "null");
      continue;
    }
    if (open.has(value)) {
      throw new TypeError("Converting circular structure to JSON");
    }
    open.add(value);
    if (Array.isArray(value)) {
      out.push("[");
      stack.push({ text: "]", closes: value });
      for (let i = value.length - 1; i >= 0; i--) {
        const item = toJsonValue(value[i], String(i));
        stack.push({ value: skipped(item) ? null : item });
        if (i > 0) stack.push({ text: "," });
      }
      continue;
    }
    const members: Array<readonly [string, unknown]> = [];
    for (const key of Object.keys(value)) {
      const item = toJsonValue(Reflect.get(value, key), key);
      if (!skipped(item)) members.push([key, item]);
    }
    out.push("{");
    stack.push({ text: "}", closes: value });
    for (let i = members.length - 1; i >= 0; i--) {
      const member = members[i];
      if (member === undefined) continue;
      stack.push({ value: member[1] });
      stack.push({ text: `${i > 0 ? "," : ""}${JSON.stringify(member[0])}:` });
    }
  }
};

/**
 * JSON.stringify of a line's value. V8 serializes recursively on its slow
 * path (taken, for one, when an object has a `toJSON` key), so data that
 * nests deep enough to be read could not be written back: on RangeError the
 * same text is built with an explicit stack.
 * @internal
 */
export const stringifyJson = (value: unknown): string => {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return stringifyIteratively(value);
  }
};
