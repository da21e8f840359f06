/**
 * The catalogue of the PostgreSQL store: columns of the session head row
 * (`title`, `tags`, `labels`, `cwd`, `metadata`, `first_text`, beside the
 * existing `created_at`, `updated_at` and `next_seq`) with their indexes,
 * the migration that adds them (and fills `first_text` for the sessions a
 * database already holds), the statement a create or append transaction
 * runs to keep them (only for a batch that sets metadata or holds a user
 * text), `list` with a query as one `SELECT`, and `remove` under the
 * writer claim. The migration that adds the columns is `schema.ts`'s.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import type { SqlClient } from "effect/sql/SqlClient";
import type { SqlError } from "effect/sql/SqlError";
import { isObject } from "../core/json.ts";
import type { SessionMetadata } from "../session/metadata_fold.ts";
import { EMPTY_METADATA } from "../session/metadata_fold.ts";
import {
  type CatalogueChange,
  type CatalogueEntry,
  encodeCursor,
  type ListPage,
  type ResolvedQuery,
} from "../store/catalogue.ts";
import { InvalidListQuery } from "../store/errors.ts";
import type { StoreCore } from "../store/core.ts";
import { checkSessionId } from "../store/ids.ts";
import * as Result from "effect/Result";
import { SESSIONS_TABLE } from "./schema.ts";
import type { PostgresStoreState } from "./store_state.ts";

const metadataJson = (metadata: SessionMetadata): string =>
  JSON.stringify({
    ...metadata,
    title: metadata.title ?? null,
    cwd: metadata.cwd ?? null,
  });

/**
 * Keeps the catalogue's columns after a batch, in the batch's transaction:
 * nothing for a batch with neither metadata nor a user text.
 *
 * @param client The writer's connection, in the transaction.
 * @param id The session.
 * @param change What the batch changed.
 * @returns The statement, or nothing.
 */
export const writeCatalogue = (
  client: SqlClient,
  id: string,
  change: CatalogueChange | undefined,
): Effect.Effect<void, SqlError> => {
  if (change === undefined) return Effect.void;
  const { metadata, firstText } = change;
  if (metadata === undefined && firstText === undefined) return Effect.void;
  return Effect.asVoid(
    metadata === undefined
      ? client.unsafe(
        `UPDATE ${SESSIONS_TABLE} SET first_text = COALESCE(first_text, $2) WHERE id = $1`,
        [id, firstText ?? null],
      )
      : client.unsafe(
        `UPDATE ${SESSIONS_TABLE} SET title = $2,
           tags = ARRAY(SELECT jsonb_array_elements_text($3::jsonb)),
           labels = $4::jsonb, cwd = $5, metadata = $6::jsonb,
           first_text = COALESCE(first_text, $7)
         WHERE id = $1`,
        [
          id,
          metadata.title ?? null,
          JSON.stringify(metadata.tags),
          JSON.stringify(metadata.labels),
          metadata.cwd ?? null,
          metadataJson(metadata),
          firstText ?? null,
        ],
      ),
  );
};

interface CatalogueRow {
  readonly id: string;
  readonly created_at: string | number | bigint;
  readonly updated_us: string | number | bigint;
  readonly next_seq: string | number | bigint;
  readonly metadata: string | null;
  readonly first_text: string | null;
}

const metadataOf = (text: string | null): SessionMetadata => {
  if (text === null) return EMPTY_METADATA;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return EMPTY_METADATA;
  }
  if (!isObject(value)) return EMPTY_METADATA;
  const tags = Array.isArray(value.tags)
    ? value.tags.filter((tag): tag is string => typeof tag === "string")
    : [];
  const labels: { [key: string]: string } = {};
  if (isObject(value.labels)) {
    for (const [key, label] of Object.entries(value.labels)) {
      if (typeof label === "string") labels[key] = label;
    }
  }
  return {
    title: typeof value.title === "string" ? value.title : undefined,
    tags,
    labels,
    cwd: typeof value.cwd === "string" ? value.cwd : undefined,
    values: isObject(value.values) ? { ...value.values } : {},
  };
};

const entryOf = (row: CatalogueRow): CatalogueEntry => ({
  id: row.id,
  createdAt: Number(row.created_at),
  updatedAt: Math.floor(Number(row.updated_us) / 1000),
  events: Number(row.next_seq),
  metadata: metadataOf(row.metadata),
  firstText: row.first_text ?? undefined,
});

const likePattern = (text: string): string =>
  `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const UPDATED_US = "(extract(epoch FROM updated_at) * 1000000)::bigint";

/**
 * The store's `list` with a query, as one `SELECT` over the head rows.
 *
 * @param store The store.
 * @param query The query.
 * @returns The page.
 */
export const queryCatalogue = (
  store: PostgresStoreState,
  query: ResolvedQuery,
): ReturnType<StoreCore["catalogue"]> =>
  Effect.suspend((): ReturnType<StoreCore["catalogue"]> => {
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const where: string[] = [];
    const { filter } = query;
    if (filter.tags !== undefined && filter.tags.length > 0) {
      where.push(
        `tags @> ARRAY(SELECT jsonb_array_elements_text(${
          param(JSON.stringify(filter.tags))
        }::jsonb))`,
      );
    }
    if (filter.labels !== undefined) {
      where.push(`labels @> ${param(JSON.stringify(filter.labels))}::jsonb`);
    }
    if (filter.cwd !== undefined) where.push(`cwd = ${param(filter.cwd)}`);
    if (filter.updatedAfter !== undefined) {
      where.push(
        `updated_at >= timestamptz 'epoch' + ${
          param(filter.updatedAfter)
        }::float8 * interval '1 millisecond'`,
      );
    }
    if (filter.updatedBefore !== undefined) {
      where.push(
        `updated_at < timestamptz 'epoch' + ${
          param(filter.updatedBefore)
        }::float8 * interval '1 millisecond'`,
      );
    }
    if (query.search !== undefined) {
      const p = param(likePattern(query.search));
      where.push(
        `(title ILIKE ${p} OR first_text ILIKE ${p} OR EXISTS (SELECT 1 FROM unnest(tags) t WHERE t ILIKE ${p}))`,
      );
    }
    const direction = query.descending ? "DESC" : "ASC";
    const compare = query.descending ? "<" : ">";
    const key = query.by === "updated"
      ? "updated_at"
      : query.by === "created"
      ? "created_at"
      : undefined;
    const after = query.after;
    if (after !== undefined) {
      const [afterKey, afterId] = after;
      if (key === undefined) {
        where.push(`id ${compare} ${param(afterId)}`);
      } else {
        if (typeof afterKey !== "number") {
          return Effect.fail(
            new InvalidListQuery({
              field: "cursor",
              value: encodeCursor(afterKey, afterId),
            }),
          );
        }
        const keyValue = query.by === "updated"
          ? `timestamptz 'epoch' + ${
            param(afterKey)
          }::bigint * interval '1 microsecond'`
          : `${param(afterKey)}::bigint`;
        where.push(`(${key}, id) ${compare} (${keyValue}, ${param(afterId)})`);
      }
    }
    const order = key === undefined
      ? `id ${direction}`
      : `${key} ${direction}, id ${direction}`;
    const sql = `SELECT id, created_at, ${UPDATED_US} AS updated_us, next_seq,
        metadata::text AS metadata, first_text
      FROM ${SESSIONS_TABLE}
      ${where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`}
      ORDER BY ${order} LIMIT ${query.limit + 1}`;
    return store.pool.unsafe<CatalogueRow>(sql, params).pipe(
      Effect.mapError(store.failed("list the sessions of")),
      Effect.map((rows): ListPage => {
        const page = rows.slice(0, query.limit);
        const last = page[page.length - 1];
        return {
          sessions: page.map(entryOf),
          cursor: last === undefined || rows.length <= query.limit
            ? undefined
            : encodeCursor(
              query.by === "updated"
                ? Number(last.updated_us)
                : query.by === "created"
                ? Number(last.created_at)
                : "",
              last.id,
            ),
        };
      }),
    );
  });

/**
 * The store's `remove`: deletes the head row in one statement unless a
 * writer's lease on it is live (`SessionLocked`, naming the holder), which
 * takes its events and checkpoint with it (`ON DELETE
 * CASCADE`): the session is whole or gone.
 *
 * @param store The store.
 * @param id The session.
 * @returns Succeeds once the session is gone.
 */
export const removeSession = (
  store: PostgresStoreState,
  id: string,
): ReturnType<StoreCore["remove"]> =>
  Effect.suspend((): ReturnType<StoreCore["remove"]> => {
    const checked = checkSessionId(id);
    if (Result.isFailure(checked)) return Effect.fail(checked.failure);
    // One statement: a session whose lease is live is not removed (its
    // writer goes on), and nothing can claim it between a check and the
    // removal. Its events and checkpoint go with it (cascade).
    return Effect.gen(function* () {
      const removed = yield* store.writers.unsafe<{ id: string }>(
        `DELETE FROM ${SESSIONS_TABLE}
         WHERE id = $1 AND (lease_until IS NULL OR lease_until < now())
         RETURNING id`,
        [id],
      ).pipe(Effect.mapError(store.failed("remove", id)));
      if (removed.length === 0) return yield* yield* store.claims.refusal(id);
    });
  });
