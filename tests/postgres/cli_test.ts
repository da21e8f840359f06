import assert from "node:assert/strict";
import { Effect } from "effect";
import * as path from "node:path";
import { layerJsonlStore, Session, SessionStore } from "@palimpsest/session";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { cliInProcess } from "../cli/_cli.ts";
import { postgresTest } from "../_helpers/postgres.ts";
import { tempDir, turnBatches } from "../_helpers/jsonl_drafts.ts";

const header = (id: string) => ({ id, createdAt: 1, isSeeded: false });

/** Stores three workload turns as session `id` in `layer`'s store. */
const storeTurns = (
  id: string,
  layer: ReturnType<typeof layerJsonlStore>,
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* SessionStore;
      const handle = yield* store.create(header(id));
      for (let turn = 0; turn < 3; turn++) {
        for (const batch of turnBatches(turn)) {
          yield* store.append(handle, batch);
        }
      }
      yield* store.close(handle);
      return Session.events(handle.session).length;
    }).pipe(Effect.provide(layer)),
  );

const at = (url: string, id: string) => {
  const u = new URL(url);
  u.searchParams.set("session", id);
  return u.toString();
};

postgresTest(
  "the reading commands take a postgres:// address as they take a file",
  async (url) => {
    const root = tempDir();
    const events = await storeTurns("chat", layerJsonlStore({ root }));
    await storeTurns("chat", layerPostgresStore({ url }));
    const file = path.join(root, "chat.jsonl");
    for (const command of ["verify", "derive", "stats"]) {
      const fromFile = await cliInProcess(command, file, "--json");
      const fromPg = await cliInProcess(command, at(url, "chat"), "--json");
      assert.equal(fromPg.code, 0, fromPg.stderr);
      assert.deepEqual(JSON.parse(fromPg.stdout), JSON.parse(fromFile.stdout));
    }
    const explain = await cliInProcess(
      "explain",
      at(url, "chat"),
      "3",
      "--json",
    );
    assert.equal(explain.code, 0, explain.stderr);
    const verify = JSON.parse(
      (await cliInProcess("verify", at(url, "chat"), "--json")).stdout,
    );
    assert.equal(verify.events, events);
  },
);

postgresTest(
  "a missing session or a bad address is a usage error",
  async (url) => {
    await storeTurns("present", layerPostgresStore({ url }));
    const missing = await cliInProcess("verify", at(url, "absent"), "--json");
    assert.equal(missing.code, 2);
    assert.equal(JSON.parse(missing.stdout).error.tag, "SessionNotFound");
    const noSession = await cliInProcess("derive", url, "--json");
    assert.equal(noSession.code, 2);
  },
);
