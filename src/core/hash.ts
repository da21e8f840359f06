/**
 * The one short hash of the library: 32-bit FNV-1a, used where an id must be
 * derived from text deterministically (draft ids, provider-safe tool ids).
 * Not for security.
 *
 * @module
 * @internal
 */

/**
 * 32-bit FNV-1a of a string's UTF-16 code units, as 8 hex digits.
 *
 * @param text The text.
 * @returns The hash.
 */
export const fnv1a = (text: string): string => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
};
