/**
 * The catalogue of a store: what `store.list(query)` tells of each session
 * ({@link CatalogueEntry}: its metadata, first user text, size in events,
 * times), the query ({@link ListQuery}: filter, search, order, cursor,
 * limit) and its page ({@link ListPage}).
 *
 * What every layer shares is here: an entry's change after a batch
 * ({@link catalogueChange}, {@link applyCatalogueChange}), an entry built
 * from a stored log's lines ({@link entryOfLines}) and the query run over
 * entries in memory ({@link queryEntries}), which the memory and JSONL
 * layers use; PostgreSQL runs the same query in SQL.
 *
 * @module
 */
import * as Result from "effect/Result";
import * as Schema from "effect/Schema";
import { type SessionEvent, SessionMetadataData } from "../core/event.ts";
import { isObject } from "../core/json.ts";
import type { Session } from "../session/session.ts";
import { sessionMetadata } from "../session/metadata.ts";
import {
  applyMetadata,
  EMPTY_METADATA,
  type SessionMetadata,
} from "../session/metadata_fold.ts";
import { InvalidListQuery } from "./errors.ts";

/** The longest first user text an entry keeps, in characters. */
export const FIRST_TEXT_CHARS = 200;

/** The page size when a query gives none. */
export const DEFAULT_LIST_LIMIT = 50;

/** The largest page a query may ask for. */
export const MAX_LIST_LIMIT = 1000;

/** What the catalogue tells of one stored session. */
export interface CatalogueEntry {
  /** The session id. */
  readonly id: string;
  /** The header's `createdAt`, epoch milliseconds. */
  readonly createdAt: number;
  /** The last change of the stored session, epoch milliseconds. */
  readonly updatedAt: number;
  /** The number of events: the session's next seq. */
  readonly events: number;
  /** What its `session/metadata` events set. */
  readonly metadata: SessionMetadata;
  /**
   * The text of its first message from the user, cut at
   * {@link FIRST_TEXT_CHARS} characters; undefined when it has none.
   */
  readonly firstText: string | undefined;
}

/** Which sessions a query keeps: each field given must hold. */
export interface ListFilter {
  /** Every one of these tags. */
  readonly tags?: ReadonlyArray<string>;
  /** Every one of these labels, with these values. */
  readonly labels?: { readonly [key: string]: string };
  /** This working directory. */
  readonly cwd?: string;
  /** Changed at or after this time, epoch milliseconds. */
  readonly updatedAfter?: number;
  /** Changed before this time, epoch milliseconds. */
  readonly updatedBefore?: number;
}

/** The key a page is sorted on; ties are broken by id in the same direction. */
export type ListOrderKey = "updated" | "created" | "id";

/** The order of a page. */
export interface ListOrder {
  /** The key; `updated` by default. */
  readonly by: ListOrderKey;
  /** `desc` (the default: newest first) or `asc`. */
  readonly direction?: "asc" | "desc";
}

/** A query of the catalogue: `store.list(query)`. */
export interface ListQuery {
  /** Which sessions to keep. */
  readonly filter?: ListFilter;
  /**
   * Keep the sessions whose title, one of whose tags or whose first user
   * text contains this text, ignoring case.
   */
  readonly search?: string;
  /** The order; the most recently changed first by default. */
  readonly order?: ListOrder;
  /** The `cursor` of the previous page, to read the next one. */
  readonly cursor?: string;
  /** The page size: 50 by default, at most 1,000. */
  readonly limit?: number;
}

/** A page of the catalogue. */
export interface ListPage {
  /** The sessions of the page, in the query's order. */
  readonly sessions: ReadonlyArray<CatalogueEntry>;
  /** Where the next page starts; undefined on the last page. */
  readonly cursor: string | undefined;
}

/** A query with its defaults applied and its cursor read. */
export interface ResolvedQuery {
  /** The filter. */
  readonly filter: ListFilter;
  /** The search text, lower-cased; undefined for none. */
  readonly search: string | undefined;
  /** The key. */
  readonly by: ListOrderKey;
  /** Whether the order is descending. */
  readonly descending: boolean;
  /** The key and id of the last entry of the previous page. */
  readonly after: readonly [key: string | number, id: string] | undefined;
  /** The page size. */
  readonly limit: number;
}

const base64url = (text: string): string =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text)))
    .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

const fromBase64url = (text: string): string | undefined => {
  try {
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    return new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
  } catch {
    return undefined;
  }
};

/**
 * The cursor after an entry whose sort key is `key`: opaque to callers.
 *
 * @param key The entry's sort key (a layer may use its own form).
 * @param id The entry's id.
 * @returns The cursor.
 */
export const encodeCursor = (key: string | number, id: string): string =>
  encodeOpaque([key, id]);

/**
 * A JSON value as an opaque token (base64url of its JSON text), as cursors
 * are written.
 *
 * @param value The value.
 * @returns The token.
 */
export const encodeOpaque = (value: unknown): string =>
  base64url(JSON.stringify(value));

/**
 * The JSON value of a token {@link encodeOpaque} wrote, or undefined for
 * text that is not one.
 *
 * @param token The token.
 * @returns The value, or undefined.
 */
export const decodeOpaque = (token: string): unknown => {
  const text = fromBase64url(token);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const decodeCursor = (
  cursor: string,
): readonly [string | number, string] | undefined => {
  const value = decodeOpaque(cursor);
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [key, id] = value;
  return (typeof key === "string" || typeof key === "number") &&
      typeof id === "string"
    ? [key, id]
    : undefined;
};

/**
 * A query with its defaults applied, or why it is refused: a limit that is
 * not an integer from 1 to 1,000, or a cursor no page of this store gave.
 *
 * @param query The query.
 * @returns The resolved query.
 */
export const resolveQuery = (
  query: ListQuery,
): Result.Result<ResolvedQuery, InvalidListQuery> => {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    return Result.fail(
      new InvalidListQuery({ field: "limit", value: String(limit) }),
    );
  }
  const by = query.order?.by ?? "updated";
  const after = query.cursor === undefined
    ? undefined
    : decodeCursor(query.cursor);
  if (query.cursor !== undefined && after === undefined) {
    return Result.fail(
      new InvalidListQuery({ field: "cursor", value: query.cursor }),
    );
  }
  const search = query.search?.trim().toLowerCase();
  return Result.succeed({
    filter: query.filter ?? {},
    search: search === undefined || search === "" ? undefined : search,
    by,
    descending: (query.order?.direction ?? "desc") === "desc",
    after,
    limit,
  });
};

/** Whether an entry passes a query's filter and search. */
export const matchesQuery = (
  entry: CatalogueEntry,
  query: ResolvedQuery,
): boolean => {
  const { filter, search } = query;
  // The metadata is read only when a field asks for it: an index may load
  // it on first use, and a page in plain order needs only the keys.
  if (filter.tags !== undefined) {
    const tags = entry.metadata.tags;
    for (const tag of filter.tags) {
      if (!tags.includes(tag)) return false;
    }
  }
  if (filter.labels !== undefined) {
    const labels = entry.metadata.labels;
    for (const [key, value] of Object.entries(filter.labels)) {
      if (labels[key] !== value) return false;
    }
  }
  if (filter.cwd !== undefined && entry.metadata.cwd !== filter.cwd) {
    return false;
  }
  if (
    filter.updatedAfter !== undefined && entry.updatedAt < filter.updatedAfter
  ) return false;
  if (
    filter.updatedBefore !== undefined &&
    entry.updatedAt >= filter.updatedBefore
  ) return false;
  if (search === undefined) return true;
  const metadata = entry.metadata;
  return (metadata.title?.toLowerCase().includes(search) ?? false) ||
    metadata.tags.some((tag) => tag.toLowerCase().includes(search)) ||
    (entry.firstText?.toLowerCase().includes(search) ?? false);
};

const keyOf = (entry: CatalogueEntry, by: ListOrderKey): string | number =>
  by === "updated" ? entry.updatedAt : by === "created" ? entry.createdAt : "";

/** Compares two (key, id) pairs: on the key, then the id. */
const compareKeys = (
  ka: string | number,
  ia: string,
  kb: string | number,
  ib: string,
): number => {
  if (ka !== kb) return ka < kb ? -1 : 1;
  return ia === ib ? 0 : ia < ib ? -1 : 1;
};

/**
 * The order of a query's entries: on the key, then the id, reversed when
 * descending.
 *
 * @param query The resolved query.
 * @returns A comparison of two entries.
 */
export const entryOrder = (
  query: ResolvedQuery,
): (a: CatalogueEntry, b: CatalogueEntry) => number => {
  const sign = query.descending ? -1 : 1;
  return (a, b) =>
    sign * compareKeys(keyOf(a, query.by), a.id, keyOf(b, query.by), b.id);
};

/**
 * One page of `entries` under a query: filtered, searched, sorted on the
 * key then the id, from after the cursor on.
 *
 * @param entries Every session's entry.
 * @param query The resolved query.
 * @returns The page.
 */
export const queryEntries = (
  entries: Iterable<CatalogueEntry>,
  query: ResolvedQuery,
): ListPage => {
  const sign = query.descending ? -1 : 1;
  const { after, by, limit } = query;
  // The page is the first `limit` in order: they are kept sorted as the
  // entries pass (a binary search, an insertion), so a page costs a pass
  // over the entries rather than a sort of them all.
  const page: Array<{ readonly key: string | number; entry: CatalogueEntry }> =
    [];
  let kept = 0;
  for (const entry of entries) {
    if (!matchesQuery(entry, query)) continue;
    const key = keyOf(entry, by);
    if (
      after !== undefined &&
      sign * compareKeys(key, entry.id, after[0], after[1]) <= 0
    ) continue;
    kept += 1;
    const worst = page.length === limit ? page[limit - 1] : undefined;
    if (
      worst !== undefined &&
      sign * compareKeys(key, entry.id, worst.key, worst.entry.id) >= 0
    ) continue;
    if (worst !== undefined) page.pop();
    let low = 0;
    let high = page.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const other = page[middle];
      if (
        other !== undefined &&
        sign * compareKeys(other.key, other.entry.id, key, entry.id) < 0
      ) low = middle + 1;
      else high = middle;
    }
    page.splice(low, 0, { key, entry });
  }
  const last = page[page.length - 1];
  return {
    sessions: page.map(({ entry }) => entry),
    cursor: last === undefined || kept <= limit
      ? undefined
      : encodeCursor(last.key, last.entry.id),
  };
};

/**
 * The text of an event when it is a message from the user (not a tool's
 * result, not a plugin's), its text blocks joined, cut at
 * {@link FIRST_TEXT_CHARS}.
 *
 * @param event An event.
 * @returns The text, or undefined.
 */
export const userTextOf = (event: SessionEvent): string | undefined => {
  if (event.type !== "user/message" || event.data.source.kind !== "user") {
    return undefined;
  }
  const parts: string[] = [];
  for (const block of event.data.content) {
    if (block.type === "text") parts.push(block.text);
  }
  return parts.length === 0
    ? undefined
    : parts.join("\n").slice(0, FIRST_TEXT_CHARS);
};

/** What a stored batch changes in its session's entry. */
export interface CatalogueChange {
  /** The session's next seq after the batch. */
  readonly events: number;
  /** The session's metadata, when the batch changed it. */
  readonly metadata: SessionMetadata | undefined;
  /** The batch's first user text, which counts only if none came before. */
  readonly firstText: string | undefined;
}

/**
 * What a batch changes in its session's entry: the metadata is read from
 * the session after the batch only when the batch holds a
 * `session/metadata` event, so a batch without one costs a scan of the
 * batch alone.
 *
 * @param session The session after the batch.
 * @param batch The events of the batch.
 * @returns The change.
 */
export const catalogueChange = (
  session: Session,
  batch: ReadonlyArray<SessionEvent>,
): CatalogueChange => {
  let metadata = false;
  let firstText: string | undefined;
  for (const event of batch) {
    if (event.type === "session/metadata") metadata = true;
    if (firstText === undefined) firstText = userTextOf(event);
  }
  return {
    events: session.surface.nextSeq,
    metadata: metadata ? sessionMetadata(session) : undefined,
    firstText,
  };
};

/**
 * An entry after a change.
 *
 * @param entry The entry before.
 * @param change The change.
 * @param updatedAt The time of the change.
 * @returns The entry after.
 */
export const applyCatalogueChange = (
  entry: CatalogueEntry,
  change: CatalogueChange,
  updatedAt: number,
): CatalogueEntry => ({
  ...entry,
  events: change.events,
  updatedAt,
  metadata: change.metadata ?? entry.metadata,
  firstText: entry.firstText ?? change.firstText,
});

const isMetadataData = Schema.is(SessionMetadataData);

/**
 * Reads the lines of a stored log (after its header) into an entry: the
 * events counted, the `session/metadata` events applied, the first user
 * text taken. A line is parsed only when it starts as one of those two
 * types do in the canonical encoding; one that does not parse, or does not
 * hold what its type says, is counted and skipped (the catalogue is a
 * summary, not a reader: opening the session reports it).
 *
 * @param entry The entry before the lines.
 * @param lines Complete lines, without `\n`.
 * @returns The entry after them (its `updatedAt` unchanged).
 */
export const entryOfLines = (
  entry: CatalogueEntry,
  lines: Iterable<string>,
): CatalogueEntry => {
  let events = entry.events;
  let metadata = entry.metadata;
  let firstText = entry.firstText;
  for (const line of lines) {
    if (line.length === 0) continue;
    events += 1;
    const isMeta = line.startsWith('{"type":"session/metadata"');
    const isUser = firstText === undefined &&
      line.startsWith('{"type":"user/message"');
    if (!isMeta && !isUser) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isObject(value)) continue;
    if (isMeta && isMetadataData(value.data)) {
      metadata = applyMetadata(metadata, value.data);
    } else if (isUser) {
      firstText = userTextOfData(value.data);
    }
  }
  return { ...entry, events, metadata, firstText };
};

const userTextOfData = (data: unknown): string | undefined => {
  if (!isObject(data) || !isObject(data.source)) return undefined;
  if (data.source.kind !== "user" || !Array.isArray(data.content)) {
    return undefined;
  }
  const parts: string[] = [];
  for (const block of data.content) {
    if (
      isObject(block) && block.type === "text" && typeof block.text === "string"
    ) {
      parts.push(block.text);
    }
  }
  return parts.length === 0
    ? undefined
    : parts.join("\n").slice(0, FIRST_TEXT_CHARS);
};

/**
 * The entry of a session with no event read yet, from its header line.
 *
 * @param id The session id.
 * @param headerLine The header line, without `\n`.
 * @param updatedAt The last change of the stored session.
 * @returns The entry.
 */
export const entryOfHeaderLine = (
  id: string,
  headerLine: string,
  updatedAt: number,
): CatalogueEntry => {
  let createdAt = 0;
  try {
    const header: unknown = JSON.parse(headerLine);
    if (isObject(header) && typeof header.createdAt === "number") {
      createdAt = header.createdAt;
    }
  } catch {
    // A header that does not parse: the session's open reports it.
  }
  return {
    id,
    createdAt,
    updatedAt,
    events: 0,
    metadata: EMPTY_METADATA,
    firstText: undefined,
  };
};

/**
 * The entry of a whole session (every event held), as a store that has it
 * in memory builds it.
 *
 * @param session The session, holding its whole log.
 * @param events Its events.
 * @param updatedAt The last change of the stored session.
 * @returns The entry.
 */
export const entryOfSession = (
  session: Session,
  events: ReadonlyArray<SessionEvent>,
  updatedAt: number,
): CatalogueEntry =>
  applyCatalogueChange(
    {
      id: session.header.id,
      createdAt: session.header.createdAt,
      updatedAt,
      events: 0,
      metadata: EMPTY_METADATA,
      firstText: undefined,
    },
    catalogueChange(session, events),
    updatedAt,
  );
