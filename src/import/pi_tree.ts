/**
 * The first pass over a pi session file: its header and entry tree (ids,
 * parents and lines only), the path from an entry to the root (what a
 * compaction keeps), and the branches left out, reported with their lines.
 * The second pass, which imports the entries on the path, is `pi.ts`.
 * A fork's parent (`parentSession`) is read the same way, to report where
 * the fork leaves it.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import * as fs from "node:fs";
import * as path from "node:path";
import type { BranchReport } from "./report.ts";
import { isRecord } from "./values.ts";
import { type SessionFormat, sessionFormatOf } from "./sniff.ts";
import { notThisFormat } from "./records.ts";
import { type ImportError, ImportNotASession } from "./errors.ts";
import { forEachRecord, type RecordReadOptions } from "./lines.ts";

/** Where an entry is in the file and which entry it continues. */
export interface TreeEntry {
  /** Its 1-based line. */
  readonly line: number;
  /** Its parent's id (`null`: a root). */
  readonly parent: string | null;
}

/** What the first pass reads: the header and the tree of entries. */
export interface PiTree {
  /** The `session` header, once read. */
  header: Record<string, unknown> | undefined;
  /** Every entry with an id, by id. */
  readonly tree: Map<string, TreeEntry>;
  /** The line of each record by index, the header being index 0 (version 1 counts entries so). */
  readonly indexLine: number[];
  /** The id of the last entry with one: the end of the path imported. */
  lastId: string | undefined;
}

/** A tree that has read nothing yet. */
export const emptyPiTree = (): PiTree => ({
  header: undefined,
  tree: new Map(),
  indexLine: [],
  lastId: undefined,
});

/** Stops the first pass once a version 1 header is read. */
export class HeaderOnly {
  readonly _tag: "HeaderOnly" = "HeaderOnly";
}
const headerOnly = new HeaderOnly();

/** The refusal of a file whose first record is no pi header. */
const noHeader = (file: string, line: number, seen?: SessionFormat) =>
  notThisFormat(
    file,
    "pi",
    seen,
    new ImportNotASession({
      from: "pi",
      line,
      expected: 'a "session" header',
    }),
  );

/**
 * Reads one record of the first pass into `t`: the header first (a file
 * whose first record is not one is refused), then each entry's id, parent
 * and line. Version 1 has no tree: the header is all it reads.
 *
 * @param t The tree read so far.
 * @param file The path (a refusal names the format the file looks like).
 * @param value The record.
 * @param line Its 1-based line.
 * @returns Nothing; the refusal; or the signal that the pass is over.
 */
export const treeRecord = (
  t: PiTree,
  file: string,
  value: unknown,
  line: number,
): Result.Result<void, ImportError | HeaderOnly> => {
  if (t.header !== undefined && t.header.version === undefined) {
    return Result.fail(headerOnly);
  }
  if (t.header === undefined) {
    const format = sessionFormatOf(value);
    if (format !== "pi" || !isRecord(value) || value.type !== "session") {
      return Result.fail(
        noHeader(file, line, format === "pi" ? undefined : format),
      );
    }
    t.header = value;
    t.indexLine.push(line);
    return Result.succeed(undefined);
  }
  t.indexLine.push(line);
  if (isRecord(value) && typeof value.id === "string") {
    const parent = typeof value.parentId === "string" ? value.parentId : null;
    t.tree.set(value.id, { line, parent });
    t.lastId = value.id;
  }
  return Result.succeed(undefined);
};

/**
 * The first pass: the header and the entry tree of a pi file, or the
 * refusal (a file with no pi header is refused as another format's when it
 * looks like one).
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @returns The tree, with its header.
 */
export const readPiTree = (
  file: string,
  options: RecordReadOptions,
): Result.Result<
  PiTree & { readonly header: Record<string, unknown> },
  ImportError
> => {
  const t = emptyPiTree();
  const first = forEachRecord(
    file,
    options,
    (value, line) => treeRecord(t, file, value, line),
  );
  if (Result.isFailure(first)) {
    const failure = first.failure;
    if (failure instanceof HeaderOnly) {
      // The header is all the first pass of version 1 reads.
    } else if (
      t.header === undefined && (failure._tag === "ImportLineNotJson" ||
        failure._tag === "ImportLineTooLong")
    ) {
      return Result.fail(notThisFormat(file, "pi", undefined, failure));
    } else return Result.fail(failure);
  }
  const header = t.header;
  if (header === undefined) return Result.fail(noHeader(file, 1));
  return Result.succeed({ ...t, header });
};

/**
 * The ids on the path from `lastId` to the root (a cycle ends it).
 *
 * @param tree The entry tree.
 * @param lastId The last entry.
 * @returns The ids on the path.
 */
export const pathToRoot = (
  tree: ReadonlyMap<string, TreeEntry>,
  lastId: string | undefined,
): Set<string> => {
  const onPath = new Set<string>();
  for (let id = lastId; id !== undefined && !onPath.has(id);) {
    onPath.add(id);
    const parent = tree.get(id)?.parent;
    id = parent === null || parent === undefined ? undefined : parent;
  }
  return onPath;
};

/**
 * The branches off the path: the entries not on it, grouped by the first
 * entry of their branch, each with the line it leaves from; in file order.
 *
 * @param tree The entry tree.
 * @param onPath The ids on the path.
 * @returns The branches.
 */
export const branchesOff = (
  tree: ReadonlyMap<string, TreeEntry>,
  onPath: ReadonlySet<string>,
): BranchReport[] => {
  const branchOf = new Map<string, string>();
  const rootOf = (id: string): string => {
    const known = branchOf.get(id);
    if (known !== undefined) return known;
    const trail: string[] = [];
    let current = id;
    for (;;) {
      trail.push(current);
      const parent = tree.get(current)?.parent;
      if (
        parent === null || parent === undefined || onPath.has(parent) ||
        !tree.has(parent)
      ) break;
      const cached = branchOf.get(parent);
      if (cached !== undefined) {
        current = cached;
        break;
      }
      current = parent;
    }
    const root = branchOf.get(current) ?? current;
    for (const t of trail) branchOf.set(t, root);
    return root;
  };
  const branches = new Map<string, number[]>();
  for (const [id, entry] of tree) {
    if (onPath.has(id)) continue;
    const root = rootOf(id);
    const lines = branches.get(root);
    if (lines === undefined) branches.set(root, [entry.line]);
    else lines.push(entry.line);
  }
  return [...branches.entries()].map(([root, lines]) => {
    const parent = tree.get(root)?.parent;
    const fromLine = parent === null || parent === undefined
      ? 0
      : tree.get(parent)?.line ?? 0;
    return { fromLine, lines: lines.sort((x, y) => x - y) };
  }).sort((x, y) => (x.lines[0] ?? 0) - (y.lines[0] ?? 0));
};

/**
 * Where a fork's `parentSession` is: the path as written, else a file of
 * that name beside the fork (sessions moved together keep their names).
 *
 * @param file The fork's path.
 * @param parent The header's `parentSession`.
 * @returns The parent's path, or `undefined` when neither is a file.
 */
export const parentFile = (file: string, parent: string): string | undefined =>
  [parent, path.join(path.dirname(file), path.basename(parent))]
    .find((p) => fs.statSync(p, { throwIfNoEntry: false })?.isFile() === true);

/**
 * What the report says of a fork (a header with `parentSession`). pi
 * copies the history it forks from into the new file (the whole path, or
 * nothing when the fork is made before the first message) and rebuilds a
 * session from its own file alone, so the fork's entries are what pi
 * shows: the parent is followed to name the entry the fork leaves it at,
 * and its entries after that are not part of this session.
 *
 * @param file The fork's path.
 * @param options How the parent is read.
 * @param t The fork's first pass.
 * @returns The report's note, or `undefined` for a file that is no fork.
 */
export const forkNote = (
  file: string,
  options: RecordReadOptions,
  t: PiTree,
): string | undefined => {
  const parent = t.header?.parentSession;
  if (typeof parent !== "string") return undefined;
  const named = JSON.stringify(parent);
  const found = parentFile(file, parent);
  if (found === undefined) {
    return `a fork of ${named}, which is not found (nor beside this file): the history pi copied into this file is imported; the parent's other entries are not`;
  }
  const read = readPiTree(found, options);
  if (Result.isFailure(read)) {
    return `a fork of ${named} (found at ${
      JSON.stringify(found)
    }), which is not a readable pi session (${read.failure._tag}): the history pi copied into this file is imported`;
  }
  const shared = [...t.tree.keys()].filter((id) => read.success.tree.has(id));
  const at = shared[shared.length - 1];
  const where = at === undefined
    ? "before its first entry (nothing copied)"
    : `at its entry ${JSON.stringify(at)} (line ${
      read.success.tree.get(at)?.line ?? 0
    } there)`;
  return `a fork of ${named} (found at ${
    JSON.stringify(found)
  }) ${where}: pi copied that history into this file and shows it from here, so it is imported from here; the parent's later entries are not part of this session`;
};
