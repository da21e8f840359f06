/**
 * Short labels of derived content for the import tests' expectations.
 *
 * @module
 */
import type { ContentBlock } from "@palimpsest/session";

/**
 * A content block as a label: its text, `call ID`, `result ID` (followed by
 * the result's text when `withResultText`), or else its type.
 */
export const blockLabel = (c: ContentBlock, withResultText = false): string =>
  c.type === "text"
    ? c.text
    : c.type === "tool-call"
    ? `call ${c.id}`
    : c.type === "tool-result"
    ? withResultText
      ? `result ${c.toolCallId} ${
        c.content.map((x) => x.type === "text" ? x.text : "").join("")
      }`
      : `result ${c.toolCallId}`
    : c.type;
