/**
 * How the page writes numbers, times, sizes and JSON for people: counts
 * grouped by thousands the same on every locale (so pages are byte-for-byte
 * reproducible), plurals, ISO 8601 times, and long strings cut without
 * splitting a surrogate pair. They return plain text, not HTML: escaping is
 * `escape.ts`'s job.
 *
 * @module
 */

/**
 * Cuts a string after about `at` UTF-16 units without splitting a
 * surrogate pair.
 *
 * @param text The string.
 * @param at Where to cut.
 * @returns The cut position.
 */
export function cutAt(text: string, at: number): number {
  if (at >= text.length) return text.length;
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at + 1 : at;
}

/**
 * Groups the digits of a count by thousands: `12345` becomes `12,345`
 * (the same on every locale, so pages are byte-for-byte reproducible).
 *
 * @param n A number.
 * @returns The formatted number.
 */
export function formatCount(n: number): string {
  const whole = Math.round(n);
  const sign = whole < 0 ? "-" : "";
  return sign + String(Math.abs(whole)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** `1 event`, `2 events`. @internal */
export const plural = (n: number, one: string, many = `${one}s`): string =>
  `${formatCount(n)} ${n === 1 ? one : many}`;

/** What a replacement saved, for people. @internal */
export const savedText = (count: number, saved: number): string =>
  count === 0
    ? "0"
    : `${formatCount(count)} · saved ${formatCount(saved)} chars`;

/** Epoch milliseconds as ISO 8601 (or as given when not a date). @internal */
export const isoTime = (ms: number): string => {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
};

/** A value as JSON, cut at `max` characters. @internal */
export const json = (value: unknown, max: number): string => {
  let text: string;
  try {
    text = JSON.stringify(value) ?? "undefined";
  } catch {
    text = String(value);
  }
  return text.length > max
    ? `${text.slice(0, cutAt(text, max))}… (${formatCount(text.length)} chars)`
    : text;
};
