/**
 * Telling JSON values from the other values a caller can hold in memory, and
 * copying them. A draft's data is judged and copied once, when it is
 * appended: what is written to disk then reads back equal to what the log
 * holds, and a caller mutating the draft afterwards cannot change the log.
 * Values from `JSON.parse` are JSON by construction and are never walked.
 *
 * @module
 */

/** A JSON copy of a value, or where and why the value is not JSON. */
export type JsonCopy =
  | { readonly ok: true; readonly value: unknown }
  | {
    readonly ok: false;
    readonly path: ReadonlyArray<string | number>;
    readonly issue: string;
  };

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
