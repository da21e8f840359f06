/**
 * The catalogue index of a JSONL store: two files beside the sessions,
 * derived from them and never trusted over them.
 *
 * - `.catalogue.json`, the snapshot: one record per session, its
 *   {@link CatalogueEntry} and the size and modification time its log had
 *   when the record was made, and the folder's modification time then. A
 *   first line holds that time and the ids and sort keys as columns, then
 *   one line per record, parsed when first used: a new store's first page
 *   in plain order reads the keys and its own 50 records.
 * - `.catalogue.journal`, what changed since: one JSON line per change,
 *   appended (never synced: it is derived) by this store's writers after
 *   each create, batch and removal. When it grows past the number of
 *   sessions (at least 1,000 lines), a `list` folds it into a new snapshot.
 *
 * Neither name can be a session's (`.jsonl`) or a sidecar's (encoded ids
 * have no dot). `list` keeps the index in memory and reads only what was
 * appended to the journal since; it rebuilds the index from the files when
 * it is missing or does not parse. Staleness is found three ways:
 *
 * - the folder's modification time differs from the one recorded: a file
 *   was created, removed or renamed there (a session created or removed
 *   by another program, copied in by hand, a journal line lost to a crash,
 *   a writer's claim file); the folder is listed again, new logs are
 *   read, gone ones dropped, and the time recorded is the one after the
 *   index's own files are written (a file another program creates in
 *   that instant waits for the folder's next change);
 * - a record on the page being returned is checked against its log's size
 *   and time, and read again (only its new bytes, when the log grew) if
 *   they differ, before the page is answered;
 * - folding the journal into a new snapshot checks every record that way.
 *
 * So a page never shows a session that is gone or one whose entry is out
 * of date; what a log changed by other means than this store can affect
 * until it is on a page or the next fold is its place in the order and the
 * filters.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import { randomUUID } from "node:crypto";
import type { SessionSeq } from "../core/seq.ts";
import { isObject } from "../core/json.ts";
import { knownEvents, type Session } from "../session/session.ts";
import type { SessionMetadata } from "../session/metadata_fold.ts";
import {
  applyCatalogueChange,
  type CatalogueChange,
  catalogueChange,
  type CatalogueEntry,
  entryOfHeaderLine,
  entryOfLines,
  entryOfSession,
  type ListPage,
  queryEntries,
  type ResolvedQuery,
} from "../store/catalogue.ts";
import { StorageError } from "../store/errors.ts";
import { ioError } from "../fs/io.ts";
import { closeQuietly, unlinkQuietly } from "../fs/durable_file.ts";
import { SESSION_FILE_EXTENSION, sessionIdOfFileName } from "./names.ts";
import { encodeSessionId } from "../store/ids.ts";
import * as Result from "effect/Result";

/** The snapshot's file name. */
export const SNAPSHOT_NAME = ".catalogue.json";
/** The journal's file name. */
export const JOURNAL_NAME = ".catalogue.journal";

const SNAPSHOT_VERSION = 2;

/** A record of the index: an entry and the log it was read from. */
interface Indexed extends CatalogueEntry {
  /** The log's size when read, in bytes. */
  readonly size: number;
  /** Where its complete lines ended then. */
  readonly scanned: number;
}

/** The index as one process holds it. */
export interface CatalogueCache {
  /** The records by id; undefined until first loaded. */
  entries: Map<string, Indexed> | undefined;
  /** The snapshot the records came from: `ino:mtime:size`. */
  snapshot: string;
  /** How much of the journal is applied. */
  journalOffset: number;
  /** How many journal lines are applied. */
  journalLines: number;
  /** The folder's modification time the records agree with. */
  folder: number;
}

/**
 * An empty cache: the index is read at the first `list`.
 *
 * @returns The cache.
 */
export const makeCatalogueCache = (): CatalogueCache => ({
  entries: undefined,
  snapshot: "",
  journalOffset: 0,
  journalLines: 0,
  folder: -1,
});

const statOrUndefined = (path: string): fs.Stats | undefined => {
  try {
    return fs.statSync(path);
  } catch {
    return undefined;
  }
};

/** A record as a plain object, its fields its own. */
const plain = (record: Indexed): Indexed => ({
  id: record.id,
  createdAt: record.createdAt,
  updatedAt: record.updatedAt,
  events: record.events,
  metadata: record.metadata,
  firstText: record.firstText,
  size: record.size,
  scanned: record.scanned,
});

const encodeRecord = (record: Indexed): unknown => ({
  ...plain(record),
  metadata: {
    ...record.metadata,
    title: record.metadata.title ?? null,
    cwd: record.metadata.cwd ?? null,
  },
  firstText: record.firstText ?? null,
});

const isCount = (u: unknown): u is number =>
  typeof u === "number" && Number.isFinite(u) && u >= 0;

const stringRecord = (
  u: unknown,
): { readonly [key: string]: string } | undefined => {
  if (!isObject(u)) return undefined;
  const out: { [key: string]: string } = {};
  for (const [key, value] of Object.entries(u)) {
    if (typeof value !== "string") return undefined;
    out[key] = value;
  }
  return out;
};

const decodeMetadata = (u: unknown): SessionMetadata | undefined => {
  if (!isObject(u)) return undefined;
  const labels = stringRecord(u.labels);
  const tags = u.tags;
  if (
    labels === undefined || !isObject(u.values) || !Array.isArray(tags) ||
    !tags.every((tag) => typeof tag === "string") ||
    (u.title !== null && typeof u.title !== "string") ||
    (u.cwd !== null && typeof u.cwd !== "string")
  ) return undefined;
  return {
    title: typeof u.title === "string" ? u.title : undefined,
    tags: tags.filter((tag) => typeof tag === "string"),
    labels,
    cwd: typeof u.cwd === "string" ? u.cwd : undefined,
    values: { ...u.values },
  };
};

const decodeRecord = (u: unknown): Indexed | undefined => {
  if (!isObject(u) || typeof u.id !== "string") return undefined;
  const metadata = decodeMetadata(u.metadata);
  const { size, scanned, createdAt, updatedAt, events, firstText } = u;
  if (
    metadata === undefined || !isCount(size) || !isCount(scanned) ||
    typeof createdAt !== "number" || !isCount(updatedAt) ||
    !isCount(events) || (firstText !== null && typeof firstText !== "string")
  ) return undefined;
  return {
    id: u.id,
    size,
    scanned,
    createdAt,
    updatedAt,
    events,
    metadata,
    firstText: typeof firstText === "string" ? firstText : undefined,
  };
};

/** A change a writer journals: the entry's change and its log's size. */
interface Patch {
  readonly id: string;
  readonly size: number;
  readonly updatedAt: number;
  readonly change: CatalogueChange;
}

const applyPatch = (
  entries: Map<string, Indexed>,
  patch: Patch,
): void => {
  const record = entries.get(patch.id);
  // A batch of a session the index does not know: the folder's listing
  // brings it in (its file is new to the index).
  if (record === undefined) return;
  entries.set(patch.id, {
    ...applyCatalogueChange(plain(record), patch.change, patch.updatedAt),
    size: patch.size,
    scanned: patch.size,
  });
};

const decodeChange = (u: unknown): CatalogueChange | undefined => {
  if (!isObject(u) || !isCount(u.events)) return undefined;
  const metadata = u.metadata === undefined
    ? undefined
    : decodeMetadata(u.metadata);
  if (u.metadata !== undefined && metadata === undefined) return undefined;
  return {
    events: u.events,
    metadata,
    firstText: typeof u.firstText === "string" ? u.firstText : undefined,
  };
};

/** Applies one journal line; false when it does not parse. */
const applyLine = (
  cache: CatalogueCache,
  entries: Map<string, Indexed>,
  line: string,
): boolean => {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return false;
  }
  if (!isObject(value)) return false;
  if (typeof value.drop === "string") {
    entries.delete(value.drop);
    return true;
  }
  if (typeof value.folder === "number") {
    cache.folder = value.folder;
    return true;
  }
  const put = decodeRecord(value.put);
  if (put !== undefined) {
    entries.set(put.id, put);
    return true;
  }
  if (isObject(value.patch) && typeof value.patch.id === "string") {
    const { id, size, updatedAt } = value.patch;
    const change = decodeChange(value.patch.change);
    if (change === undefined || !isCount(size) || !isCount(updatedAt)) {
      return false;
    }
    applyPatch(entries, { id, size, updatedAt, change });
    return true;
  }
  return false;
};

/**
 * Appends journal lines. Only to a journal that exists: a folder whose
 * index was never built gets none (its first `list` reads the logs), and
 * the index's own writes create it. A failure only leaves the index to be
 * checked.
 */
const journal = (
  root: string,
  lines: ReadonlyArray<unknown> | (() => ReadonlyArray<unknown>),
): void => {
  let fd: number | undefined;
  try {
    fd = fs.openSync(
      nodePath.join(root, JOURNAL_NAME),
      fs.constants.O_WRONLY | fs.constants.O_APPEND,
    );
    // Made only once there is a journal to take them.
    const made = typeof lines === "function" ? lines() : lines;
    if (made.length > 0) {
      fs.writeSync(
        fd,
        made.map((line) => `${JSON.stringify(line)}\n`).join(""),
      );
    }
  } catch {
    // No index, or derived data: the folder's time or the page's check
    // finds the change.
  } finally {
    if (fd !== undefined) closeQuietly(fd);
  }
};

/**
 * Journals a created session's entry.
 *
 * @param root The store's folder.
 * @param session The session created, holding its whole log.
 * @param path Its log.
 */
export const journalCreated = (
  root: string,
  session: Session,
  path: string,
): void =>
  journal(root, () => {
    const info = statOrUndefined(path);
    if (info === undefined) return [];
    const entry = entryOfSession(
      session,
      knownEvents(session, session.surface.baseSeq),
      info.mtimeMs,
    );
    return [{
      put: encodeRecord({ ...entry, size: info.size, scanned: info.size }),
    }];
  });

/**
 * Journals what a stored batch changed in its session's entry.
 *
 * @param root The store's folder.
 * @param next The session after the batch.
 * @param from The batch's first seq.
 * @param fd The log's descriptor (for its time).
 * @param size The log's size after the batch.
 */
export const journalBatch = (
  root: string,
  next: Session,
  from: SessionSeq,
  fd: number,
  size: number,
): void =>
  journal(root, () => {
    const updatedAt = fs.fstatSync(fd).mtimeMs;
    const change = catalogueChange(next, knownEvents(next, from));
    return [{
      patch: {
        id: next.header.id,
        size,
        updatedAt,
        change: {
          ...change,
          metadata: change.metadata === undefined ? undefined : {
            ...change.metadata,
            title: change.metadata.title ?? null,
            cwd: change.metadata.cwd ?? null,
          },
        },
      },
    }];
  });

/**
 * Journals a removed session.
 *
 * @param root The store's folder.
 * @param id The session.
 */
export const journalRemoved = (root: string, id: string): void =>
  journal(root, [{ drop: id }]);

/** Reads `length` bytes at `offset`, or fewer where the file ends. */
const readAt = (fd: number, offset: number, length: number): Uint8Array => {
  const bytes = new Uint8Array(length);
  let read = 0;
  while (read < length) {
    const n = fs.readSync(fd, bytes, read, length - read, offset + read);
    if (n === 0) break;
    read += n;
  }
  return bytes.subarray(0, read);
};

/** Reads a log into a record: from `from`'s bytes on when it only grew. */
const readLog = (
  id: string,
  path: string,
  from: Indexed | undefined,
): Indexed | undefined => {
  let bytes: Uint8Array;
  let info: fs.Stats;
  try {
    info = fs.statSync(path);
    const start = from !== undefined && info.size >= from.scanned
      ? from.scanned
      : 0;
    const fd = fs.openSync(path, "r");
    try {
      bytes = readAt(fd, start, info.size - start);
    } finally {
      fs.closeSync(fd);
    }
    const text = new TextDecoder().decode(bytes);
    const end = text.lastIndexOf("\n");
    const complete = end < 0 ? "" : text.slice(0, end);
    const scannedBytes = end < 0
      ? 0
      : new TextEncoder().encode(text.slice(0, end + 1)).length;
    const lines = complete.length === 0 ? [] : complete.split("\n");
    let base: CatalogueEntry;
    if (start === 0 || from === undefined) {
      const header = lines.shift();
      if (header === undefined) return undefined;
      base = entryOfHeaderLine(id, header, info.mtimeMs);
    } else {
      base = from;
    }
    const entry = entryOfLines(base, lines);
    return {
      ...entry,
      updatedAt: info.mtimeMs,
      size: info.size,
      scanned: start + scannedBytes,
    };
  } catch {
    return undefined;
  }
};

/** The ids of the logs in the folder. */
const listIds = (root: string): Set<string> => {
  const ids = new Set<string>();
  for (const name of fs.readdirSync(root)) {
    const id = sessionIdOfFileName(name);
    if (id !== undefined) ids.add(id);
  }
  return ids;
};

/** The log of `id`, or undefined for an id no log can have. */
const logPath = (root: string, id: string): string | undefined => {
  const stem = encodeSessionId(id);
  return Result.isSuccess(stem)
    ? nodePath.join(root, `${stem.success}${SESSION_FILE_EXTENSION}`)
    : undefined;
};

/**
 * Writes the snapshot of `entries` and starts an empty journal: the
 * journal is renamed away first (a writer's next line starts a new one),
 * what was appended to it since it was read is applied, and with `verify`
 * every record is checked against its log after that, so a line a writer
 * appended to the old journal too late to be read is made up for by the
 * check (its log was written before the rename).
 */
const writeSnapshot = (
  root: string,
  cache: CatalogueCache,
  entries: Map<string, Indexed>,
  verify: boolean,
): void => {
  const target = nodePath.join(root, SNAPSHOT_NAME);
  const journalPath = nodePath.join(root, JOURNAL_NAME);
  const old = `${journalPath}.${randomUUID()}.old`;
  let rotated = false;
  try {
    fs.renameSync(journalPath, old);
    rotated = true;
  } catch {
    // No journal yet.
  }
  // At once, so that a writer's next line has a journal to go to.
  ensureJournal(root);
  if (rotated) readJournal(old, cache, entries);
  if (verify) {
    for (const record of [...entries.values()]) {
      refresh(root, entries, record);
    }
  }
  const temp = `${target}.${randomUUID()}.tmp`;
  try {
    const records = Array.from(entries.values());
    const lines = records.map((record) =>
      `${JSON.stringify(encodeRecord(record))}\n`
    );
    const head = JSON.stringify({
      catalogue: SNAPSHOT_VERSION,
      folder: cache.folder,
      ids: records.map((record) => record.id),
      createdAt: records.map((record) => record.createdAt),
      updatedAt: records.map((record) => record.updatedAt),
      bytes: lines.map((line) => encoder.encode(line).length),
    });
    fs.writeFileSync(temp, `${head}\n${lines.join("")}`);
    fs.renameSync(temp, target);
    const info = fs.statSync(target);
    cache.snapshot = snapshotKeyOf(info);
    cache.journalOffset = 0;
    cache.journalLines = 0;
  } catch {
    unlinkQuietly(temp);
  }
  if (rotated) unlinkQuietly(old);
  settleFolder(root, cache, []);
};

/** Creates the journal when missing. */
const ensureJournal = (root: string): void => {
  try {
    fs.closeSync(fs.openSync(nodePath.join(root, JOURNAL_NAME), "a"));
  } catch {
    // Derived data: the next list tries again.
  }
};

/**
 * Journals `lines` and the folder's time as it is after this store's own
 * changes to the folder (the journal's creation, a snapshot's rename), so
 * that they do not read as another program's. The journal exists before
 * the time is read: appending to it then changes nothing of the folder.
 */
const settleFolder = (
  root: string,
  cache: CatalogueCache,
  lines: ReadonlyArray<unknown>,
): void => {
  ensureJournal(root);
  try {
    cache.folder = fs.statSync(root).mtimeMs;
  } catch {
    // The next list lists the folder again.
  }
  journal(root, [...lines, { folder: cache.folder }]);
};

/**
 * The records' lines of a snapshot whose head was read: a line is read on
 * its own (a page's records), until so many were that the query needs
 * most (a filter, a search): then the whole file is, once.
 */
class SnapshotLines {
  /** Lines read on their own so far. */
  #reads = 0;
  /** The whole file, once read; null when it was not the snapshot's. */
  #bytes: Uint8Array | null | undefined;
  constructor(
    /** The snapshot's path. */
    readonly path: string,
    /** Its `ino:mtime:size` when its head was read. */
    readonly key: string,
  ) {}

  /**
   * The JSON value of the line at `offset`; undefined when the snapshot
   * is no longer the one whose head was read, or the line does not parse.
   */
  value(offset: number, length: number): unknown {
    if (this.#bytes === undefined && this.#reads >= LINES_READ_ALONE) {
      this.#bytes = this.#read(0, undefined) ?? null;
    }
    const bytes = this.#bytes === undefined
      ? (this.#reads += 1, this.#read(offset, length))
      : this.#bytes?.subarray(offset, offset + length);
    if (bytes === undefined) return undefined;
    try {
      return JSON.parse(decoder.decode(bytes));
    } catch {
      return undefined;
    }
  }

  /** Reads `length` bytes at `offset` (all of them when undefined). */
  #read(offset: number, length: number | undefined): Uint8Array | undefined {
    let fd: number | undefined;
    try {
      fd = fs.openSync(this.path, "r");
      const info = fs.fstatSync(fd);
      if (snapshotKeyOf(info) !== this.key) return undefined;
      return readAt(fd, offset, length ?? info.size);
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeQuietly(fd);
    }
  }
}

/**
 * How many lines a snapshot has read one by one before it reads the whole
 * file: past a page or two, one read of it all costs less.
 */
const LINES_READ_ALONE = 200;

/** Where a record's line is: its snapshot and its bytes there. */
interface RecordLine {
  readonly lines: SnapshotLines;
  readonly offset: number;
  readonly length: number;
}

/**
 * A record whose snapshot line is read when a field other than its id
 * and keys is first used: a page in plain order reads only its own
 * records. A line that does not hold the record its keys announce (the
 * snapshot was replaced since, or is damaged) gives way to the log: the
 * record is read from it, or, when that fails, is one whose size no log
 * has, which the page's check drops. Its other fields are getters on the
 * prototype (an object per record with accessors of its own costs a
 * thousand times more to make): spread it only through {@link plain}.
 */
class LazyRecord implements Indexed {
  readonly #root: string;
  readonly #line: RecordLine;
  #full: Indexed | undefined;
  constructor(
    readonly id: string,
    readonly createdAt: number,
    readonly updatedAt: number,
    root: string,
    line: RecordLine,
  ) {
    this.#root = root;
    this.#line = line;
  }
  get size(): number {
    return this.#load().size;
  }
  get scanned(): number {
    return this.#load().scanned;
  }
  get events(): number {
    return this.#load().events;
  }
  get metadata(): SessionMetadata {
    return this.#load().metadata;
  }
  get firstText(): string | undefined {
    return this.#load().firstText;
  }
  #load(): Indexed {
    if (this.#full !== undefined) return this.#full;
    const { id, createdAt, updatedAt } = this;
    const { lines, offset, length } = this.#line;
    const record = decodeRecord(lines.value(offset, length));
    if (
      record !== undefined && record.id === id &&
      record.createdAt === createdAt && record.updatedAt === updatedAt
    ) return this.#full = record;
    const path = logPath(this.#root, id);
    return this.#full =
      (path === undefined ? undefined : readLog(id, path, undefined)) ?? {
        // An entry with nothing read (no header line to read it from).
        ...entryOfHeaderLine(id, "", updatedAt),
        createdAt,
        size: -1,
        scanned: 0,
      };
  }
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** A snapshot's identity: a new one (renamed in) or a changed one differs. */
const snapshotKeyOf = (info: fs.Stats): string =>
  `${info.ino}:${info.mtimeMs}:${info.size}`;

/**
 * The snapshot's first line, read in growing chunks up to its end (the
 * records after it are read when used), and its length with its `\n`.
 */
const readHead = (fd: number): { text: string; bytes: number } | undefined => {
  let bytes = new Uint8Array(0);
  for (;;) {
    const chunk = readAt(fd, bytes.length, Math.max(65536, bytes.length));
    if (chunk.length === 0) return undefined;
    const end = chunk.indexOf(10);
    const grown = new Uint8Array(
      bytes.length + (end < 0 ? chunk.length : end),
    );
    grown.set(bytes);
    grown.set(end < 0 ? chunk : chunk.subarray(0, end), bytes.length);
    bytes = grown;
    if (end >= 0) {
      return { text: decoder.decode(bytes), bytes: bytes.length + 1 };
    }
  }
};

/**
 * Reads the snapshot, or undefined when missing or unreadable. Its first
 * line holds the folder's time and every record's id, sort keys and line
 * length, as columns; each line after it one record, in the same order,
 * read when first used ({@link LazyRecord}): a store's first page costs
 * the first line's read and parse, not the whole index's.
 */
const readSnapshot = (
  root: string,
  path: string,
  cache: CatalogueCache,
): { entries: Map<string, Indexed>; key: string } | undefined => {
  let head: unknown;
  let headBytes: number;
  let info: fs.Stats;
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, "r");
    info = fs.fstatSync(fd);
    const read = readHead(fd);
    if (read === undefined) return undefined;
    head = JSON.parse(read.text);
    headBytes = read.bytes;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeQuietly(fd);
  }
  if (
    !isObject(head) || head.catalogue !== SNAPSHOT_VERSION ||
    typeof head.folder !== "number"
  ) return undefined;
  const { ids, createdAt, updatedAt, bytes } = head;
  if (
    !Array.isArray(ids) || !Array.isArray(createdAt) ||
    !Array.isArray(updatedAt) || !Array.isArray(bytes) ||
    createdAt.length !== ids.length || updatedAt.length !== ids.length ||
    bytes.length !== ids.length
  ) return undefined;
  const key = snapshotKeyOf(info);
  const lines = new SnapshotLines(path, key);
  const entries = new Map<string, Indexed>();
  let offset = headBytes;
  for (let i = 0; i < ids.length; i++) {
    const id: unknown = ids[i];
    const created: unknown = createdAt[i];
    const updated: unknown = updatedAt[i];
    const length: unknown = bytes[i];
    if (
      typeof id !== "string" || typeof created !== "number" ||
      !isCount(updated) || !isCount(length)
    ) return undefined;
    entries.set(
      id,
      new LazyRecord(id, created, updated, root, { lines, offset, length }),
    );
    offset += length;
  }
  // A snapshot cut short or grown is not the one its head describes.
  if (offset !== info.size) return undefined;
  cache.folder = head.folder;
  return { entries, key };
};

/** Applies the journal's lines past the cache's offset. */
const readJournal = (
  path: string,
  cache: CatalogueCache,
  entries: Map<string, Indexed>,
): void => {
  let fd: number;
  try {
    fd = fs.openSync(path, "r");
  } catch {
    return;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size <= cache.journalOffset) return;
    const bytes = new Uint8Array(size - cache.journalOffset);
    const read = fs.readSync(fd, bytes, 0, bytes.length, cache.journalOffset);
    const text = new TextDecoder().decode(bytes.subarray(0, read));
    const end = text.lastIndexOf("\n");
    if (end < 0) return;
    for (const line of text.slice(0, end).split("\n")) {
      applyLine(cache, entries, line);
      cache.journalLines += 1;
    }
    cache.journalOffset += new TextEncoder().encode(text.slice(0, end + 1))
      .length;
  } finally {
    fs.closeSync(fd);
  }
};

/** Checks a record against its log, reading the log again when it changed. */
const refresh = (
  root: string,
  entries: Map<string, Indexed>,
  record: Indexed,
): Indexed | undefined => {
  const path = logPath(root, record.id);
  const info = path === undefined ? undefined : statOrUndefined(path);
  if (path === undefined || info === undefined) {
    entries.delete(record.id);
    return undefined;
  }
  if (info.size === record.size && info.mtimeMs === record.updatedAt) {
    return record;
  }
  const read = readLog(record.id, path, plain(record));
  if (read === undefined) entries.delete(record.id);
  else entries.set(record.id, read);
  return read;
};

/**
 * The index, brought up to date with the snapshot, the journal and the
 * folder's listing.
 */
const loadIndex = (
  root: string,
  cache: CatalogueCache,
): Map<string, Indexed> => {
  const snapshotPath = nodePath.join(root, SNAPSHOT_NAME);
  const journalPath = nodePath.join(root, JOURNAL_NAME);
  const snapshotInfo = statOrUndefined(snapshotPath);
  const snapshotKey = snapshotInfo === undefined
    ? ""
    : snapshotKeyOf(snapshotInfo);
  const journalSize = statOrUndefined(journalPath)?.size ?? 0;
  let entries = cache.entries;
  let rebuilt = false;
  if (
    entries === undefined || snapshotKey !== cache.snapshot ||
    journalSize < cache.journalOffset
  ) {
    cache.journalOffset = 0;
    cache.journalLines = 0;
    cache.snapshot = snapshotKey;
    const snapshot = snapshotInfo === undefined
      ? undefined
      : readSnapshot(root, snapshotPath, cache);
    // The one read, should it have been replaced since the stat.
    if (snapshot !== undefined) cache.snapshot = snapshot.key;
    entries = snapshot?.entries;
    if (entries === undefined) {
      // Missing or unreadable: rebuilt from the logs themselves.
      entries = new Map();
      cache.folder = -1;
      rebuilt = true;
    }
  }
  readJournal(journalPath, cache, entries);
  const folder = fs.statSync(root).mtimeMs;
  if (folder !== cache.folder) {
    const ids = listIds(root);
    const added: Indexed[] = [];
    for (const id of entries.keys()) {
      if (!ids.has(id)) entries.delete(id);
    }
    for (const id of ids) {
      if (entries.has(id)) continue;
      const path = logPath(root, id);
      const read = path === undefined
        ? undefined
        : readLog(id, path, undefined);
      if (read !== undefined) {
        entries.set(id, read);
        added.push(read);
      }
    }
    cache.folder = folder;
    if (rebuilt || added.length > 1000) {
      writeSnapshot(root, cache, entries, rebuilt);
    } else {
      settleFolder(
        root,
        cache,
        added.map((record) => ({ put: encodeRecord(record) })),
      );
    }
  } else if (cache.journalLines > Math.max(1000, entries.size)) {
    writeSnapshot(root, cache, entries, true);
  }
  cache.entries = entries;
  return entries;
};

/**
 * The store's `list` with a query: the index brought up to date, the query
 * run over it, the page's records checked against their logs (and the
 * query run again when one changed).
 *
 * @param root The store's folder.
 * @param cache The index as this process holds it.
 * @param query The query.
 * @returns The page.
 */
export const queryCatalogue = (
  root: string,
  cache: CatalogueCache,
  query: ResolvedQuery,
): Effect.Effect<ListPage, StorageError> =>
  Effect.suspend(() => {
    let entries: Map<string, Indexed>;
    try {
      entries = loadIndex(root, cache);
    } catch (cause) {
      const error = ioError("list the catalogue of", root, cause);
      return Effect.fail(
        new StorageError({
          operation: "list",
          id: undefined,
          code: error.code,
          cause: error,
          ...(error.permission === undefined
            ? {}
            : { permission: error.permission }),
        }),
      );
    }
    for (let round = 0; round < 3; round++) {
      const page = queryEntries(entries.values(), query);
      let changed = false;
      for (const entry of page.sessions) {
        const record = entries.get(entry.id);
        if (record === undefined) continue;
        if (refresh(root, entries, record) !== record) changed = true;
      }
      if (!changed) {
        return Effect.succeed({
          ...page,
          sessions: page.sessions.map(entryOf),
        });
      }
    }
    const page = queryEntries(entries.values(), query);
    return Effect.succeed({ ...page, sessions: page.sessions.map(entryOf) });
  });

/** The entry of a record, without the index's own fields. */
const entryOf = (entry: CatalogueEntry): CatalogueEntry => ({
  id: entry.id,
  createdAt: entry.createdAt,
  updatedAt: entry.updatedAt,
  events: entry.events,
  metadata: entry.metadata,
  firstText: entry.firstText,
});
