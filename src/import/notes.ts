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

/** Records a line of a source kind, for a reason the kind keeps. */
type KindNote = (
  b: Builder,
  kind: string,
  line: number,
  reason: string,
) => void;

/** The lines noted under `kind`, with the first reason given for it. */
const linesOf = (
  map: Map<string, { reason: string; lines: number[] }>,
  kind: string,
  reason: string,
): number[] => {
  const entry = map.get(kind);
  if (entry !== undefined) return entry.lines;
  const lines: number[] = [];
  map.set(kind, { reason, lines });
  return lines;
};

/** Records a line skipped on purpose. */
export const skip: KindNote = (b, kind, line, reason) => {
  linesOf(b.skipped, kind, reason).push(line);
};

/**
 * Records a source part kept opaque in an assistant message's stream; a
 * line with several such parts is listed once.
 */
export const keptOpaque: KindNote = (b, kind, line, reason) => {
  const lines = linesOf(b.opaque, kind, reason);
  if (lines[lines.length - 1] !== line) lines.push(line);
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
