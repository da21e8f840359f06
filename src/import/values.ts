/**
 * Reading a source file's values: objects, strings, dates, file names, and
 * tool calls' arguments as the JSON text a `tool-call` block holds.
 *
 * @module
 * @internal
 */
import type { ToolCallBlock } from "../core/message.ts";

/** A date string as epoch milliseconds, or `undefined`. */
export const epochOf = (u: unknown): number | undefined => {
  if (typeof u !== "string") return undefined;
  const parsed = Date.parse(u);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
};

/** A JSON object, narrowed. */
export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u);

/** A string field, or `undefined`. */
export const str = (u: unknown): string | undefined =>
  typeof u === "string" ? u : undefined;

/** The last segment of a path, with either separator. */
export const fileName = (file: string): string =>
  file.split(/[\\/]/).pop() ?? file;

/** Arguments as raw JSON text: a string as it is, anything else stringified. */
export const argumentsText = (u: unknown): string =>
  typeof u === "string" ? u : JSON.stringify(u ?? {});

/**
 * A tool-call block from a source's call id and tool name (`""` when either
 * is not a string) and its arguments' JSON text.
 */
export const toolCallBlock = (
  id: unknown,
  name: unknown,
  args: string,
): ToolCallBlock => ({
  type: "tool-call",
  id: str(id) ?? "",
  name: str(name) ?? "",
  arguments: args,
});
