/**
 * PostgreSQL for the tests: a real server, never a mock.
 *
 * The server is named by `PALIMPSEST_PG_URL` (a superuser URL, e.g. the one
 * `bash tools/with_postgres.sh` exports around a command). Each test gets a
 * database of its own, created from that URL and dropped afterwards, so
 * tests can use fixed session ids and never see each other's rows.
 *
 * Without the URL the PostgreSQL tests are registered as ignored, so that a
 * plain `deno task test` runs on a machine without a server; in CI
 * (`CI=true`) they fail instead, loudly, so a CI run can never pass
 * without them.
 *
 * @module
 */
import { Effect, Redacted, type Scope } from "effect";
import { PgClient } from "@effect/sql-pg";
import * as Reactivity from "effect/reactivity/Reactivity";
import {
  makePostgresStore,
  type PostgresSessionStore,
  type PostgresStoreOptions,
} from "../../src/postgres/mod.ts";

/** The server the PostgreSQL tests use, when one is configured. */
export const postgresUrl: string | undefined =
  Deno.env.get("PALIMPSEST_PG_URL") || undefined;

const inCi = Deno.env.get("CI") === "true";

/**
 * `url` on the server itself when the tests reach it through a pooler
 * (`PALIMPSEST_PG_DIRECT_URL`, set by `tools/with_postgres.sh`): for tests
 * of what the server answers itself, such as the logins of roles they make
 * (a pooler knows only the users of its own file).
 */
export const serverUrl = (url: string): string => {
  const direct = Deno.env.get("PALIMPSEST_PG_DIRECT_URL");
  if (direct === undefined) return url;
  const parsed = new URL(url);
  const server = new URL(direct);
  parsed.hostname = server.hostname;
  parsed.port = server.port;
  return parsed.toString();
};

/** The URL of another database on the same server. */
export const databaseUrl = (url: string, database: string): string => {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
};

const admin = <A>(
  url: string,
  f: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>,
): Promise<A> =>
  Effect.runPromise(Effect.scoped(
    Effect.flatMap(
      PgClient.makeClient({ url: Redacted.make(url) }).pipe(
        Effect.provide(Reactivity.layer),
      ),
      f,
    ),
  ));

/**
 * Runs raw SQL on the database over a connection of its own.
 *
 * @param url The database.
 * @param text The statement.
 * @param params Its parameters.
 * @returns The rows.
 */
export const querySql = (
  url: string,
  text: string,
  params: ReadonlyArray<unknown> = [],
): Promise<ReadonlyArray<Record<string, unknown>>> =>
  admin(
    url,
    (client) => client.unsafe<Record<string, unknown>>(text, [...params]),
  );

/**
 * Runs a program with a PostgreSQL store over `url`, closed after it.
 *
 * @param url The database.
 * @param f The program.
 * @param options The store's options.
 * @returns What the program gives.
 */
export const withPgStore = <A, E>(
  url: string,
  f: (store: PostgresSessionStore) => Effect.Effect<A, E, Scope.Scope>,
  options: Omit<PostgresStoreOptions, "url"> = {},
): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(
    makePostgresStore({ url, ...options }),
    f,
  )));

/**
 * Runs `f` with the URL of a fresh, empty database, dropped afterwards.
 *
 * @param f The test body.
 * @returns What `f` returns.
 */
export async function withDatabase<A>(
  f: (url: string) => Promise<A>,
): Promise<A> {
  const base = postgresUrl;
  if (base === undefined) throw new Error("PALIMPSEST_PG_URL is not set");
  const name = `palimpsest_test_${crypto.randomUUID().replaceAll("-", "")}`;
  await admin(base, (sql) => sql.unsafe(`CREATE DATABASE ${name}`));
  try {
    return await f(databaseUrl(base, name));
  } finally {
    await admin(
      base,
      (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    );
  }
}

/**
 * Registers a test that needs PostgreSQL: given a fresh database's URL.
 * Ignored without a server, failing in CI without one.
 *
 * @param name The test name.
 * @param fn The body, given the database URL.
 */
export function postgresTest(
  name: string,
  fn: (url: string) => Promise<void>,
): void {
  if (postgresUrl === undefined) {
    if (inCi) {
      Deno.test(name, () => {
        throw new Error(
          "PALIMPSEST_PG_URL is not set: CI runs the PostgreSQL tests against a real server (see .ci/run)",
        );
      });
    } else {
      Deno.test({
        name: `${name} (needs PALIMPSEST_PG_URL)`,
        ignore: true,
        fn() {},
      });
    }
    return;
  }
  Deno.test(name, () => withDatabase(fn));
}
