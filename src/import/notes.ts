/**
 * What an import notes for its report as it goes: source lines counted by
 * kind, lines skipped on purpose, parts kept opaque, what could not be
 * carried over (unknown types, lines that are no record) and what the
 * importer made up.
 *
 * @module
 * @internal
 */
import { type Builder, ok, type Step } from "./builder.ts";

/** Counts a source line of a kind. */
export const count = (b: Builder, kind: string): void => {
  b.kinds.set(kind, (b.kinds.get(kind) ?? 0) + 1);
};

/** Records a line skipped on purpose. */
export const skip = (
  b: Builder,
  kind: string,
  line: number,
  reason: string,
): void => {
  const entry = b.skipped.get(kind);
  if (entry === undefined) b.skipped.set(kind, { reason, lines: [line] });
  else entry.lines.push(line);
};

/** Records a source part kept opaque in an assistant message's stream. */
export const keptOpaque = (
  b: Builder,
  kind: string,
  line: number,
  reason: string,
): void => {
  const entry = b.opaque.get(kind);
  if (entry === undefined) b.opaque.set(kind, { reason, lines: [line] });
  else if (entry.lines[entry.lines.length - 1] !== line) entry.lines.push(line);
};

/** Records what could not be carried over. */
export const notCarried = (
  b: Builder,
  line: number,
  kind: string,
  note: string,
): void => {
  b.notCarried.push({ line, kind, note });
};

/**
 * Records a source record whose type the importer does not know; the import
 * goes on without it.
 *
 * @param what What names the type, as "line type" or "entry type".
 * @param type The unknown value of that type.
 */
export const unknownType = (
  b: Builder,
  line: number,
  kind: string,
  what: string,
  type: unknown,
): Step => {
  notCarried(
    b,
    line,
    kind,
    `${what} ${JSON.stringify(type)} is not known to this importer`,
  );
  return ok;
};

/** Records a source record that is not a JSON object. */
export const notAnObject = (b: Builder, line: number): void => {
  // One label for a line that is no record, whether it parses or not.
  count(b, "not-json");
  notCarried(b, line, "not-json", "a line that is not a JSON record");
};

/** Records what the importer made up. */
export const synthesized = (
  b: Builder,
  line: number,
  kind: string,
  note: string,
): void => {
  b.synthesized.push({ line, kind, note });
};
