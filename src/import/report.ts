/**
 * The import report: what a source file held, what became of each part, and
 * what could not be carried over, with line numbers. A value (for `--json`)
 * and a text rendering for people.
 *
 * @module
 */

import type { SourceTool } from "./importer.ts";

export type { SourceTool };

/** One noted source line. */
export interface ReportEntry {
  /** The 1-based source line (0 when the note is about the whole file). */
  readonly line: number;
  /** The source kind of that line (e.g. `message/assistant`, `compacted`). */
  readonly kind: string;
  /** What happened, in a sentence. */
  readonly note: string;
}

/** Source lines of one kind that were skipped on purpose. */
export interface SkippedKind {
  /** The source kind (e.g. `progress`, `event_msg/token_count`). */
  readonly kind: string;
  /** How many lines. */
  readonly count: number;
  /** Why they carry nothing the model saw. */
  readonly reason: string;
  /** Their 1-based lines. */
  readonly lines: ReadonlyArray<number>;
}

/** A branch of a source tree left out of the import. */
export interface BranchReport {
  /** The line of the entry the branch leaves from (0: from the root). */
  readonly fromLine: number;
  /** The lines of the branch's entries. */
  readonly lines: ReadonlyArray<number>;
}

/** What an import did. */
export interface ImportReport {
  /** The tool that wrote the source. */
  readonly from: SourceTool;
  /** The source file. */
  readonly file: string;
  /** The source's format version, when it declares one. */
  readonly formatVersion?: number | string;
  /** Lines read, blank ones included. */
  readonly lines: number;
  /** Source lines per source kind. */
  readonly kinds: Readonly<Record<string, number>>;
  /** Events written. */
  readonly events: number;
  /** Surface nodes after the import. */
  readonly surface: number;
  /** Replacements made for the source's compactions. */
  readonly compactions: number;
  /** Error tool results that close calls the source never answered. */
  readonly repairs: number;
  /** True when the last turn was left open (a crashed source): `repair` closes it. */
  readonly openTurn: boolean;
  /** Events made up by the importer (closers, renderings), by source line. */
  readonly synthesized: ReadonlyArray<ReportEntry>;
  /** Source lines skipped on purpose, by kind. */
  readonly skipped: ReadonlyArray<SkippedKind>;
  /** Source parts kept opaque (in an assistant message's `stream`), by kind. */
  readonly opaque: ReadonlyArray<SkippedKind>;
  /** What could not be carried over (or only partly), by source line. */
  readonly notCarried: ReadonlyArray<ReportEntry>;
  /** Branches of the source tree left out. */
  readonly branches: ReadonlyArray<BranchReport>;
}

/**
 * Compresses sorted line numbers into ranges: `[1,2,3,7]` → `1-3, 7`.
 *
 * @param lines Increasing line numbers.
 * @param max The most ranges shown before `...`.
 * @returns The ranges as text.
 *
 * @example Ranges
 * ```ts
 * import { lineRanges } from "@palimpsest/session/import";
 * import assert from "node:assert/strict";
 *
 * assert.equal(lineRanges([1, 2, 3, 7]), "1-3, 7");
 * ```
 */
export function lineRanges(lines: ReadonlyArray<number>, max = 12): string {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const start = lines[i] ?? 0;
    let end = start;
    while (i + 1 < lines.length && lines[i + 1] === end + 1) {
      i += 1;
      end += 1;
    }
    i += 1;
    if (out.length === max) {
      out.push("...");
      break;
    }
    out.push(start === end ? `${start}` : `${start}-${end}`);
  }
  return out.join(", ");
}

const plural = (n: number, noun: string): string =>
  `${n} ${n === 1 ? noun : `${noun}s`}`;

/**
 * Renders an import report for people.
 *
 * @param report The report.
 * @param target The file written, when there is one.
 * @returns Text, one item per line, ending with `\n`.
 *
 * @example Rendering a report
 * ```ts
 * import { formatImportReport } from "@palimpsest/session/import";
 * import assert from "node:assert/strict";
 *
 * const text = formatImportReport({
 *   from: "pi", file: "s.jsonl", lines: 3, kinds: { "message/user": 2 },
 *   events: 4, surface: 2, compactions: 0, repairs: 0, openTurn: false,
 *   synthesized: [], skipped: [], opaque: [], notCarried: [], branches: [],
 * });
 * assert.match(text, /message\/user 2/);
 * ```
 */
export function formatImportReport(
  report: ImportReport,
  target?: string,
): string {
  const version = report.formatVersion === undefined
    ? ""
    : ` (format ${report.formatVersion})`;
  const out: string[] = [
    `imported ${report.from}${version} ${report.file}${
      target === undefined ? "" : ` to ${target}`
    }: ${plural(report.lines, "line")}, ${
      plural(report.events, "event")
    }, surface ${report.surface}, ` +
    `${plural(report.compactions, "compaction")}, ${
      plural(report.repairs, "repair")
    }`,
  ];
  const kinds = Object.entries(report.kinds).sort((a, b) => b[1] - a[1]);
  out.push(`source kinds: ${kinds.map(([k, n]) => `${k} ${n}`).join(", ")}`);
  const entries = (title: string, list: ReadonlyArray<ReportEntry>) => {
    if (list.length === 0) return;
    out.push(`${title}:`);
    for (const e of list) {
      out.push(
        `  ${e.line === 0 ? "file" : `line ${e.line}`} (${e.kind}): ${e.note}`,
      );
    }
  };
  const byKind = (title: string, list: ReadonlyArray<SkippedKind>) => {
    if (list.length === 0) return;
    out.push(`${title}:`);
    for (const s of list) {
      out.push(
        `  ${s.kind} x${s.count} (${s.reason}): lines ${lineRanges(s.lines)}`,
      );
    }
  };
  entries("synthesized", report.synthesized);
  byKind("skipped", report.skipped);
  byKind("kept opaque", report.opaque);
  entries("not carried over", report.notCarried);
  if (report.branches.length > 0) {
    out.push("branches left out:");
    for (const b of report.branches) {
      out.push(
        `  ${
          b.fromLine === 0 ? "from the root" : `from line ${b.fromLine}`
        }: ` +
          `${b.lines.length} entries, lines ${lineRanges(b.lines)}`,
      );
    }
  }
  if (report.openTurn) {
    out.push("the last turn is open: `palimpsest repair` closes it");
  }
  return `${out.join("\n")}\n`;
}
