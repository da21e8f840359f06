/**
 * Reading a session from opencode's SQLite database (`opencode.db`, where
 * opencode keeps its sessions since it left the JSON storage folder) as the
 * document `opencode export` prints for it: the `session` row as `info`, each
 * `message` row's `data` with its id, each `part` row's `data` with its ids,
 * keys in the order `opencode export` writes them. The opencode importer then
 * reads that document as it reads an export, so both give the same messages.
 *
 * SQLite is read with `node:sqlite`, loaded only when a database is imported
 * (Deno 2, Node 22.5 or later), so that the package loads on runtimes without
 * it; there the import fails with a {@link FileIoError} saying what is needed.
 * The database is opened read-only and never written.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import type { FileIoError } from "../fs/errors.ts";
import { ioError } from "../fs/io.ts";
import { ImportSessionNotChosen } from "./errors.ts";
import { isRecord, str } from "./values.ts";

/** What this module uses of a `node:sqlite` statement. */
interface Statement {
  all(...params: ReadonlyArray<string>): unknown[];
}

/** What this module uses of a `node:sqlite` database. */
interface Database {
  prepare(sql: string): Statement;
  close(): void;
}

/** What this module uses of `node:sqlite`. */
interface Sqlite {
  readonly DatabaseSync: new (
    path: string,
    options: { readonly readOnly: boolean },
  ) => Database;
}

const isSqlite = (u: unknown): u is Sqlite =>
  isRecord(u) && typeof u.DatabaseSync === "function";

// A specifier in a variable: neither type checkers (Node 20's types have no
// `node:sqlite`) nor bundlers resolve it ahead of an import that needs it.
const SQLITE = "node:sqlite";

/** Loads `node:sqlite`, or says which runtimes have it. */
const loadSqlite = (file: string): Effect.Effect<Sqlite, FileIoError> => {
  const missing = (cause: unknown): FileIoError =>
    ioError(
      "read",
      file,
      new Error(
        `reading an opencode database needs node:sqlite (Node 22.5 or later, or Deno 2), which this runtime lacks (${
          cause instanceof Error ? cause.message : String(cause)
        }); or import what \`opencode export\` prints`,
      ),
    );
  return Effect.flatMap(
    Effect.tryPromise({
      try: (): Promise<unknown> => import(SQLITE),
      catch: missing,
    }),
    (module) =>
      isSqlite(module)
        ? Effect.succeed(module)
        : Effect.fail(missing("no DatabaseSync")),
  );
};

const rows = (db: Database, sql: string, ...params: string[]): Array<
  Record<string, unknown>
> => db.prepare(sql).all(...params).filter(isRecord);

/** A JSON column's value (a record), or nothing when it is not one. */
const json = (u: unknown): Record<string, unknown> => {
  if (typeof u !== "string") return {};
  try {
    const value: unknown = JSON.parse(u);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
};

/** A JSON column's value, or the column as it is when it is no JSON. */
const column = (u: unknown): unknown => {
  if (typeof u !== "string") return u;
  try {
    return JSON.parse(u);
  } catch {
    return u;
  }
};

/** The `session` row as `opencode export` writes its `info`. */
const sessionInfo = (row: Record<string, unknown>): Record<string, unknown> => {
  const some = (key: string, value: unknown): Record<string, unknown> =>
    value === null || value === undefined ? {} : { [key]: value };
  return {
    id: row.id,
    slug: row.slug,
    projectID: row.project_id,
    ...some("workspaceID", row.workspace_id),
    ...some("parentID", row.parent_id),
    directory: row.directory,
    ...some("path", row.path),
    title: row.title,
    ...some("agent", row.agent),
    ...some("model", column(row.model)),
    version: row.version,
    ...(row.summary_additions === null ? {} : {
      summary: {
        additions: row.summary_additions,
        deletions: row.summary_deletions,
        files: row.summary_files,
        ...some("diffs", column(row.summary_diffs)),
      },
    }),
    ...some("share", row.share_url === null ? null : { url: row.share_url }),
    cost: row.cost,
    tokens: {
      input: row.tokens_input,
      output: row.tokens_output,
      reasoning: row.tokens_reasoning,
      cache: { read: row.tokens_cache_read, write: row.tokens_cache_write },
    },
    ...some("permission", column(row.permission)),
    ...some("revert", column(row.revert)),
    ...some("metadata", column(row.metadata)),
    time: {
      created: row.time_created,
      updated: row.time_updated,
      ...some("compacting", row.time_compacting),
      ...some("archived", row.time_archived),
    },
  };
};

/** The session to read: the one asked for, else the only one. */
const chooseSession = (
  file: string,
  sessions: ReadonlyArray<Record<string, unknown>>,
  requested: string | undefined,
): Effect.Effect<Record<string, unknown>, ImportSessionNotChosen> => {
  const chosen = requested === undefined
    ? (sessions.length === 1 ? sessions[0] : undefined)
    : sessions.find((s) => s.id === requested);
  return chosen === undefined
    ? Effect.fail(
      new ImportSessionNotChosen({
        file,
        requested,
        sessions: sessions.map((s) => str(s.id) ?? ""),
      }),
    )
    : Effect.succeed(chosen);
};

/** The export document of the session in `row`. */
const documentOf = (
  db: Database,
  row: Record<string, unknown>,
): { readonly text: string; readonly value: unknown } => {
  const id = str(row.id) ?? "";
  const parts = new Map<string, unknown[]>();
  for (
    const p of rows(
      db,
      "SELECT id, message_id, session_id, data FROM part WHERE session_id = ? ORDER BY message_id, id",
      id,
    )
  ) {
    const message = str(p.message_id) ?? "";
    const list = parts.get(message) ?? [];
    list.push({
      ...json(p.data),
      id: p.id,
      sessionID: p.session_id,
      messageID: p.message_id,
    });
    parts.set(message, list);
  }
  const messages = rows(
    db,
    "SELECT id, session_id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
    id,
  ).map((m) => ({
    info: { ...json(m.data), id: m.id, sessionID: m.session_id },
    parts: parts.get(str(m.id) ?? "") ?? [],
  }));
  const value = { info: sessionInfo(row), messages };
  return { text: JSON.stringify(value, null, 2), value };
};

/**
 * The document `opencode export` prints for one session of the database,
 * and its text (two-space indented, as `opencode export` prints it, so that
 * the report's line numbers are about those of the export).
 *
 * @param file The database.
 * @param session The session's id; may be left out when the database holds
 * one session.
 * @returns The document and its text.
 */
export const readOpencodeDatabase = (
  file: string,
  session: string | undefined,
): Effect.Effect<
  { readonly text: string; readonly value: unknown },
  FileIoError | ImportSessionNotChosen
> =>
  Effect.gen(function* () {
    const sqlite = yield* loadSqlite(file);
    const read = <A>(f: () => A): Effect.Effect<A, FileIoError> =>
      Effect.try({ try: f, catch: (cause) => ioError("read", file, cause) });
    return yield* Effect.acquireUseRelease(
      Effect.try({
        try: () => new sqlite.DatabaseSync(file, { readOnly: true }),
        catch: (cause) => ioError("open", file, cause),
      }),
      (db) =>
        Effect.gen(function* () {
          const sessions = yield* read(() =>
            rows(db, "SELECT * FROM session ORDER BY time_created, id")
          );
          const row = yield* chooseSession(file, sessions, session);
          return yield* read(() => documentOf(db, row));
        }),
      (db) => Effect.sync(() => db.close()),
    );
  });
