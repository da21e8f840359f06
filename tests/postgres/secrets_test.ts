/**
 * The password fuzz on a real server: a role is made for each generated
 * password, so that the well-formed addresses log in and every command's
 * output of success (copy, verify, stats, derive, explain, repair, view) is
 * checked as well as its failures; a wrong password is refused with the
 * hint about the user and password, a missing session with the hint about
 * the location, and neither shows the password.
 */
import assert from "node:assert/strict";
import { Effect, Redacted } from "effect";
import fc from "fast-check";
import { PgClient } from "@effect/sql-pg";
import * as Reactivity from "effect/reactivity/Reactivity";
import { postgresTest, serverUrl } from "../_helpers/postgres.ts";
import { config } from "../_helpers/fuzz.ts";
import { cliInProcess } from "../cli/_cli.ts";
import {
  address,
  assertHidden,
  checkAddress,
  FORMS,
  noCounts,
  password,
  sessionFile,
  WELL_FORMED,
} from "../cli/_secrets.ts";

const sql = (url: string, statement: string): Promise<unknown> =>
  Effect.runPromise(Effect.scoped(
    Effect.flatMap(
      PgClient.makeClient({ url: Redacted.make(url) }).pipe(
        Effect.provide(Reactivity.layer),
      ),
      (client) => client.unsafe(statement),
    ),
  ));

const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** `host:port/database` of a URL. */
const hostOf = (url: string): string => {
  const u = new URL(url);
  return `${u.hostname}:${u.port}${u.pathname}`;
};

const RUNS = Math.max(3, Math.round(config.runs / 25));

postgresTest(
  "no command shows a password that logs in, whatever the address form",
  async (pooled) => {
    // The roles are made on the server, and logged in to there.
    const url = serverUrl(pooled);
    const counts = noCounts();
    let loggedIn = 0;
    let role = 0;
    const file = sessionFile();
    await fc.assert(
      fc.asyncProperty(password, async (pw) => {
        const name = `fuzz_${crypto.randomUUID().slice(0, 8)}_${role++}`;
        await sql(
          url,
          `CREATE ROLE ${name} LOGIN SUPERUSER PASSWORD ${literal(pw)}`,
        );
        try {
          for (const form of FORMS) {
            const session = `s${counts.addresses}`;
            const addr = address(form, name, pw, hostOf(url), session);
            counts.addresses++;
            await checkAddress(counts, pw, addr, file);
            if (!WELL_FORMED.includes(form)) continue;
            const verify = await cliInProcess("verify", addr, "--json");
            assert.equal(verify.code, 0, `${form}: ${verify.stdout}`);
            loggedIn++;
          }
        } finally {
          await sql(url, `DROP OWNED BY ${name}`);
          await sql(url, `DROP ROLE ${name}`);
        }
      }),
      { seed: config.seed, numRuns: RUNS },
    );
    assert.equal(loggedIn, RUNS * WELL_FORMED.length);
    // copy in, copy out and view (text), verify, derive, stats, explain,
    // repair --dry-run and repair (text and JSON) succeed on each address
    // that logs in.
    assert.ok(counts.succeeded >= loggedIn * 15, String(counts.succeeded));
    console.log(
      `password fuzz (PostgreSQL): ${counts.addresses} addresses (${loggedIn} logged in), ${counts.outputs} outputs checked, ${counts.runs} command runs (${counts.succeeded} exited 0)`,
    );
  },
);

postgresTest(
  "a wrong password is an authentication failure, a missing session a location one",
  async (pooled) => {
    // What the server answers a wrong password, not a pooler.
    const url = serverUrl(pooled);
    const counts = noCounts();
    const right = new URL(url);
    const wrongPw = `${decodeURIComponent(right.password)}-Wr0ng@:/?#`;
    const wrong = address(
      "userinfo encoded",
      right.username,
      wrongPw,
      hostOf(url),
      "s",
    );
    for (const args of [["verify", wrong], ["copy", sessionFile(), wrong]]) {
      const run = await cliInProcess(...args);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /\(28P01\)/);
      assert.match(
        run.stderr,
        /hint: the server refused the login: check the user and password/,
      );
      assertHidden(counts, wrongPw, run.stderr, `${args[0]} ${wrong}`);
      const json = await cliInProcess(...args, "--json");
      assertHidden(counts, wrongPw, json.stdout, `${args[0]} --json ${wrong}`);
    }
    right.searchParams.set("session", "absent");
    const missing = await cliInProcess("verify", right.toString());
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /SessionNotFound/);
    assert.match(
      missing.stderr,
      /hint: no session has this id there; check the id, path or address/,
    );
    assertHidden(
      counts,
      decodeURIComponent(right.password),
      missing.stderr,
      "verify of a missing session",
    );
  },
);
