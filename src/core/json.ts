/**
 * The JSON utilities the library shares: telling a JSON object from other
 * values, writing JSON text that does not depend on the call stack, and judging and copying the values a
 * caller appends (a draft's data is judged and copied once, when it is
 * appended, so that what is written reads back equal to what the log holds,
 * and a caller mutating the draft afterwards cannot change the log; values
 * from `JSON.parse` are JSON by construction and are never walked). Deeply
 * nested data is legal input, so the walks are iterative. Where two JSON
 * values differ is `json_diff.ts`.
 *
 * @module
 */

/**
 * Whether a value is a JSON object: not `null`, not an array.
 * @internal
 */
export const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u);

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
 * A value as text: a string as it is, anything else as its JSON (`"null"`
 * when it has none, such as `undefined`). How a tool call's arguments and a
 * tool's output become message text.
 *
 * @param value Any value.
 * @returns The text.
 */
export const jsonText = (value: unknown): string =>
  typeof value === "string" ? value : JSON.stringify(value) ?? "null";

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

// ---------------------------------------------------------------------------
// Judging and copying a caller's values

/** A JSON copy of a value, or where and why the value is not JSON. */
export type JsonCopy =
  | { readonly ok: true; readonly value: unknown }
  | {
    readonly ok: false;
    readonly path: ReadonlyArray<string | number>;
    readonly issue: string;
  };

/** Where and why a value is not JSON. */
export type JsonIssue = Extract<JsonCopy, { readonly ok: false }>;

type Container = unknown[] | Record<string, unknown>;

const CYCLE_CHECK_DEPTH = 512;

interface Frame {
  readonly source: object;
  readonly target: Container;
  readonly keys: ReadonlyArray<string> | undefined;
  readonly length: number;
  index: number;
}

const describe = (value: unknown): string => {
  if (typeof value === "object" && value !== null) {
    const name: unknown = value.constructor?.name;
    return typeof name === "string" && name.length > 0
      ? `an instance of "${name}"`
      : "an object with a prototype";
  }
  if (typeof value === "number") return `"${String(value)}"`;
  return `a value of type "${typeof value}"`;
};

/** Why a non-container value is not JSON, or undefined when it is. */
const scalarIssue = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      if (!Number.isFinite(value)) {
        return `Expected a finite number but found ${describe(value)}`;
      }
      return Object.is(value, -0)
        ? 'Expected a JSON number but found "-0" (JSON writes it as 0)'
        : undefined;
    default:
      return value === null
        ? undefined
        : `Expected a JSON value but found ${describe(value)}`;
  }
};

const setKey = (target: Container, key: string, value: unknown): void => {
  if (Array.isArray(target)) {
    target.push(value);
  } else if (key === "__proto__") {
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
};

/** What {@link quickCopy} returns when the value needs the full walk. */
const BAIL: object = {};

const PLAIN: object = {};

/** Whether `Object.prototype` has no enumerable key (nobody added one). */
const inheritsNoKeys = (): boolean => {
  for (const _ in PLAIN) return false;
  return true;
};

/** Depth past which {@link quickCopy} gives up (and a cycle is found). */
const QUICK_DEPTH = 64;

/**
 * A shallow copy of a plain object by spread, from one of several spread
 * sites chosen by where the object sits (its depth, and whether it is an
 * array element). The engine's fast clone works per site and only while a
 * site has met a few object shapes: a single site meets every shape of a
 * draft (about ten in a standard cycle) and clones each on the slow path,
 * key by key. Where an object sits sorts the shapes (data, messages, content
 * blocks, sources) so that most sites meet few.
 */
const shallowCopy = (
  value: object,
  depth: number,
  element: boolean,
): Record<string, unknown> => {
  if (element) {
    switch (depth) {
      case 2:
        return { ...value };
      case 3:
        return { ...value };
      case 4:
        return { ...value };
      default:
        return { ...value };
    }
  }
  switch (depth) {
    case 0:
      return { ...value };
    case 1:
      return { ...value };
    case 2:
      return { ...value };
    case 3:
      return { ...value };
    default:
      return { ...value };
  }
};

/**
 * A copy of a plain JSON value of modest depth, or {@link BAIL} at the first
 * thing it does not copy as is: it accepts exactly what the full walk
 * accepts, and reads each member once.
 */
const quickCopy = (
  value: unknown,
  depth: number,
  element: boolean,
): unknown => {
  if (typeof value !== "object" || value === null) {
    return isJsonScalar(value) ? value : BAIL;
  }
  if (depth >= QUICK_DEPTH) return BAIL;
  // Shallow copies by the engine's own fast paths; each member is read
  // once, into the copy, and judged (and copied deeper) there.
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return BAIL;
    if (value.length > 0 && Object.keys(value).length !== value.length) {
      return BAIL;
    }
    const out: unknown[] = value.slice();
    for (let i = 0; i < out.length; i++) {
      if (!quickMember(out, i, depth, true)) return BAIL;
    }
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return BAIL;
  if (Object.getOwnPropertySymbols(value).length > 0) return BAIL;
  const out = shallowCopy(value, depth, element);
  // The copy's own keys: the caller checked that its prototype
  // (Object.prototype) has no enumerable key.
  for (const key in out) {
    if (!quickMember(out, key, depth, false)) return BAIL;
  }
  return out;
};

/**
 * Judges the member `key` of a shallow copy made by {@link quickCopy} at
 * `depth`, copying it deeper in place when it is a container; false when
 * the value needs the full walk.
 */
const quickMember = <K extends string | number>(
  out: Record<K, unknown>,
  key: K,
  depth: number,
  element: boolean,
): boolean => {
  const item = out[key];
  if (typeof item === "object" && item !== null) {
    const copied = quickCopy(item, depth + 1, element);
    if (copied === BAIL) return false;
    out[key] = copied;
    return true;
  }
  return isJsonScalar(item);
};

/** A string, a boolean, `null` or a finite number other than `-0`. */
const isJsonScalar = (value: unknown): boolean =>
  typeof value === "string" || typeof value === "boolean" || value === null ||
  (typeof value === "number" && Number.isFinite(value) &&
    (value !== 0 || 1 / value > 0));

/**
 * Judges a value as JSON and copies it: plain objects (prototype
 * `Object.prototype` or `null`, no symbol keys) and plain arrays (no holes,
 * no extra keys), strings, booleans, `null` and finite numbers other than
 * `-0`. Refused, with the path of the first offender: `bigint`, `NaN`,
 * `±Infinity`, `-0`, `undefined` (as a value or an array element),
 * functions, symbols, class instances (`Date`, `Map`, ...), sparse arrays
 * and cycles. A value shared by two places is copied for each, as JSON
 * writes it. Iterative: nesting depth costs no stack.
 *
 * @param root The value.
 * @returns The copy, or the path and issue of the first offender.
 * @internal
 */
export function copyJsonValue(root: unknown): JsonCopy {
  // Nearly every draft is plain JSON a few levels deep: copy it with a
  // recursive walk first, and only when that walk meets anything else (an
  // offender, a `__proto__` key, or more depth than it allows) judge the
  // value again with the walk below, which finds the first offender's path.
  const fast = inheritsNoKeys() ? quickCopy(root, 0, false) : BAIL;
  if (fast !== BAIL) return { ok: true, value: fast };
  if (typeof root !== "object" || root === null) {
    const issue = scalarIssue(root);
    return issue === undefined
      ? { ok: true, value: root }
      : { ok: false, path: [], issue };
  }
  // Cycles are looked for only past a depth no sane draft reaches: a cycle
  // makes the walk as deep as you like, and from there every container on
  // the path is remembered, so the repeat is found within one more lap.
  let open: Set<object> | undefined;
  const stack: Frame[] = [];
  // The path of `key` in the container on top of the stack: each parent's
  // index is already past the child being walked.
  const pathTo = (key: string | number): Array<string | number> => {
    const path: Array<string | number> = [];
    for (let i = 0; i < stack.length - 1; i++) {
      const frame = stack[i];
      if (frame === undefined) continue;
      const at = frame.index - 1;
      path.push(frame.keys === undefined ? at : frame.keys[at] ?? at);
    }
    path.push(key);
    return path;
  };
  // Opens a container; an issue when it is not a plain one.
  const enter = (value: object): string | Container => {
    if (open === undefined && stack.length >= CYCLE_CHECK_DEPTH) {
      open = new Set(stack.map((frame) => frame.source));
    }
    if (open?.has(value) === true) {
      return "Expected a JSON value but found a cycle";
    }
    const proto: unknown = Object.getPrototypeOf(value);
    let frame: Frame;
    if (Array.isArray(value)) {
      if (proto !== Array.prototype) {
        return `Expected a JSON value but found ${describe(value)}`;
      }
      if (Object.keys(value).length !== value.length) {
        return "Expected an array without holes or extra keys";
      }
      frame = {
        source: value,
        target: [],
        keys: undefined,
        length: value.length,
        index: 0,
      };
    } else {
      if (proto !== Object.prototype && proto !== null) {
        return `Expected a JSON value but found ${describe(value)}`;
      }
      if (Object.getOwnPropertySymbols(value).length > 0) {
        return "Expected an object without symbol keys";
      }
      const keys = Object.keys(value);
      frame = {
        source: value,
        target: {},
        keys,
        length: keys.length,
        index: 0,
      };
    }
    open?.add(value);
    stack.push(frame);
    return frame.target;
  };
  const first = enter(root);
  if (typeof first === "string") return { ok: false, path: [], issue: first };
  for (;;) {
    const frame = stack[stack.length - 1];
    if (frame === undefined) return { ok: true, value: first };
    if (frame.index === frame.length) {
      stack.pop();
      open?.delete(frame.source);
      continue;
    }
    const at = frame.index++;
    const key = frame.keys === undefined ? String(at) : frame.keys[at] ?? "";
    const value: unknown = Reflect.get(frame.source, key);
    if (typeof value !== "object" || value === null) {
      const issue = scalarIssue(value);
      if (issue !== undefined) {
        return {
          ok: false,
          path: pathTo(frame.keys === undefined ? at : key),
          issue,
        };
      }
      setKey(frame.target, key, value);
      continue;
    }
    const entered = enter(value);
    if (typeof entered === "string") {
      return {
        ok: false,
        path: pathTo(frame.keys === undefined ? at : key),
        issue: entered,
      };
    }
    setKey(frame.target, key, entered);
  }
}

/**
 * Whether a plain JSON container of modest depth is JSON, without copying
 * it: it accepts exactly what {@link copyJsonValue} accepts, and false sends
 * the value to that walk for the offender's path. Strings, the usual
 * members, are passed over without a call.
 */
const quickJudge = (value: object, depth: number): boolean => {
  if (depth >= QUICK_DEPTH) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    const length = value.length;
    if (length > 0 && Object.keys(value).length !== length) return false;
    for (let i = 0; i < length; i++) {
      if (!quickJudgeMember(value[i], depth)) return false;
    }
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  if (Object.getOwnPropertySymbols(value).length > 0) return false;
  const record = value as Record<string, unknown>;
  // Own keys only: the caller checked that Object.prototype has none.
  for (const key in record) {
    if (!quickJudgeMember(record[key], depth)) return false;
  }
  return true;
};

/** A member of a container {@link quickJudge} judges at `depth`. */
const quickJudgeMember = (item: unknown, depth: number): boolean =>
  typeof item === "string" ||
  (typeof item === "object" && item !== null
    ? quickJudge(item, depth + 1)
    : isJsonScalar(item));

/**
 * Judges a value as JSON without copying it: the same values as
 * {@link copyJsonValue} are refused, with the same path and issue.
 *
 * @param root The value.
 * @returns `undefined` when it is JSON, else the first offender's path and
 * issue.
 * @internal
 */
export function judgeJsonValue(root: unknown): JsonIssue | undefined {
  if (inheritsNoKeys() && quickJudgeMember(root, -1)) return undefined;
  const full = copyJsonValue(root);
  return full.ok ? undefined : full;
}
