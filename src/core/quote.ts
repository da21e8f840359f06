/**
 * Quoting values inside error messages, shared by every error module.
 *
 * Building a message must never throw: V8 serializes deeply nested data
 * recursively once an object has a `toJSON` key, and `String()` of a deep
 * array recurses too, so either can throw `RangeError`; such values are shown
 * as a stand-in. Long values are cut to 80 characters.
 *
 * @module
 */

const MAX = 80;

const cut = (text: string): string =>
  text.length > MAX ? `${text.slice(0, MAX - 3)}...` : text;

/** A stand-in for a value that `JSON.stringify` refused. */
const opaqueText = (value: unknown): string => {
  if (Array.isArray(value)) return "[...]";
  if (typeof value === "object" && value !== null) return "{...}";
  try {
    return String(value);
  } catch {
    return typeof value;
  }
};

/**
 * Quotes a value for a message: strings as they are, `-0` as `-0`, other
 * values as JSON, all in double quotes and cut to 80 characters.
 * @internal
 */
export const quote = (value: unknown): string => {
  if (typeof value === "string") return `"${cut(value)}"`;
  if (Object.is(value, -0)) return `"-0"`;
  if (typeof value === "number" || typeof value === "boolean") {
    return `"${value}"`;
  }
  if (value === undefined) return `"undefined"`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = opaqueText(value);
  }
  return `"${cut(text)}"`;
};
