/**
 * The one way log text reaches the page: every string from a log goes
 * through {@link escapeHtml} before it is written, in text and in quoted
 * attribute values alike. The page embeds no log data in a script, a style
 * or a URL; the only links it builds are `#e<seq>` fragments from seqs,
 * which are integers.
 *
 * @module
 */

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

const SPECIAL = /[&<>"']/g;

/**
 * Escapes text for an HTML text node or a quoted attribute value. Nothing
 * in the result can open or close a tag, a comment or an attribute, so
 * `</script>`, `<!--`, `onerror=` and `javascript:` stay plain text.
 *
 * @param text Any string.
 * @returns The escaped string.
 *
 * @example Hostile text stays text
 * ```ts
 * import { escapeHtml } from "@palimpsest/session/view";
 * import assert from "node:assert/strict";
 *
 * assert.equal(escapeHtml(`</script><img src=x onerror="alert(1)">`),
 *   "&lt;/script&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
 * ```
 */
export function escapeHtml(text: string): string {
  return SPECIAL.test(text)
    ? text.replace(SPECIAL, (c) => ENTITIES[c] ?? c)
    : text;
}
