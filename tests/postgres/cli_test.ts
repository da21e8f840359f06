import assert from "node:assert/strict";
import { Effect, Result } from "effect";
import * as path from "node:path";
import { layerJsonlStore, Session, SessionStore } from "@palimpsest/session";
import {
  layerPostgresStore,
  loadPostgresSession,
} from "@palimpsest/session/postgres";
import * as fs from "node:fs";
import { cliInProcess } from "../cli/_cli.ts";
import { postgresTest } from "../_helpers/postgres.ts";
import { s, turnBatches, unansweredLs } from "../_helpers/build.ts";
import { tempDir } from "../_helpers/store.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";
import { surfaceNodes } from "@palimpsest/session/internal";

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
      return Result.getOrThrow(Session.events(handle.session)).length;
    }).pipe(Effect.scoped, Effect.provide(layer)),
  );

/** Runs the CLI in this process and checks that it succeeded. */
const succeeds = async (...args: string[]) => {
  const run = await cliInProcess(...args);
  assert.equal(run.code, 0, run.stderr + run.stdout);
  return run;
};

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
      const fromPg = await succeeds(command, at(url, "chat"), "--json");
      assert.deepEqual(JSON.parse(fromPg.stdout), JSON.parse(fromFile.stdout));
    }
    await succeeds(
      "explain",
      at(url, "chat"),
      "3",
      "--json",
    );
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

postgresTest(
  "copy moves a session from a file to PostgreSQL and back, byte for byte",
  async (url) => {
    const root = tempDir();
    await storeTurns("trip", layerJsonlStore({ root }));
    const original = fs.readFileSync(path.join(root, "trip.jsonl"), "utf8");
    await succeeds(
      "copy",
      path.join(root, "trip.jsonl"),
      at(url, "trip"),
      "--json",
    );
    const rows = await Effect.runPromise(
      loadPostgresSession(url, "trip").pipe(
        Effect.map((log) => log.report.bytes),
      ),
    );
    assert.equal(rows, new TextEncoder().encode(original).length);
    const back = tempDir();
    await succeeds("copy", at(url, "trip"), back, "--json");
    assert.equal(
      fs.readFileSync(path.join(back, "trip.jsonl"), "utf8"),
      original,
    );
    await succeeds(
      "copy",
      at(url, "trip"),
      path.join(back, "other.jsonl"),
      "--json",
    );
    assert.equal(
      fs.readFileSync(path.join(back, "other.jsonl"), "utf8"),
      original.replace('"id":"trip"', '"id":"other"'),
    );
  },
);

postgresTest(
  "copy never replaces a session at the destination",
  async (url) => {
    const root = tempDir();
    await storeTurns("twice", layerJsonlStore({ root }));
    const file = path.join(root, "twice.jsonl");
    assert.equal((await cliInProcess("copy", file, at(url, "twice"))).code, 0);
    const again = await cliInProcess("copy", file, at(url, "twice"), "--json");
    assert.equal(again.code, 2);
    assert.equal(JSON.parse(again.stdout).error.tag, "SessionAlreadyExists");
    const onFile = await cliInProcess("copy", at(url, "twice"), root, "--json");
    assert.equal(onFile.code, 2);
    assert.equal(JSON.parse(onFile.stdout).error.tag, "SessionAlreadyExists");
  },
);

postgresTest(
  "repair closes the interrupted turn of a session in PostgreSQL",
  async (url) => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore;
        const handle = yield* store.create(header("cut"));
        for (const batch of turnBatches(0).slice(0, 3)) {
          yield* store.append(handle, batch);
        }
      }).pipe(Effect.scoped, Effect.provide(layerPostgresStore({ url }))),
    );
    const dry = await succeeds(
      "repair",
      at(url, "cut"),
      "--dry-run",
      "--json",
    );
    assert.equal(JSON.parse(dry.stdout).closers.length, 3);
    const done = await succeeds("repair", at(url, "cut"), "--json");
    assert.deepEqual(
      JSON.parse(done.stdout).closers.map((e: { type: string }) => e.type),
      ["tool/result", "step/end", "turn/end"],
    );
    assert.deepEqual(JSON.parse(done.stdout).transcriptViolations, []);
    const log = await Effect.runPromise(loadPostgresSession(url, "cut"));
    assert.equal(log.events.at(-1)?.type, "turn/end");
    const again = await succeeds("repair", at(url, "cut"));
    assert.match(again.stdout, /nothing to close/);
    const missing = await cliInProcess("repair", at(url, "absent"));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /SessionNotFound/);
  },
);

postgresTest(
  "a log stored before the unanswered-call rule copies into PostgreSQL, reads back, and holds new appends to the rule",
  async (url) => {
    // tests/fixtures/stored/shadowed-unanswered-call.jsonl: a compaction
    // over a call whose result came after it, as older versions wrote.
    const fixture = new URL(
      "../fixtures/stored/shadowed-unanswered-call.jsonl",
      import.meta.url,
    );
    const root = tempDir();
    const file = path.join(root, "shadowed.jsonl");
    fs.copyFileSync(fixture, file);
    await succeeds("copy", file, at(url, "shadowed"), "--json");
    const verified = await succeeds("verify", at(url, "shadowed"), "--json");
    assert.equal(JSON.parse(verified.stdout).ok, true);
    // explain reads the stored log as the store does: the late result's
    // lineage, and the compaction that shadows the call.
    const explained = await succeeds(
      "explain",
      at(url, "shadowed"),
      "1",
      "--json",
    );
    const fromFile = await succeeds("explain", file, "1", "--json");
    assert.deepEqual(JSON.parse(explained.stdout), JSON.parse(fromFile.stdout));
    const outcome = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore;
        const handle = yield* store.open("shadowed", { mode: "write" });
        const nodes = [...surfaceNodes(handle.session.surface)];
        const appended = yield* Effect.exit(
          store.append(handle, [unansweredLs]),
        );
        const refused = yield* Effect.exit(store.append(handle, [{
          type: "user/message",
          surfaceOp: { op: "replace", startSeq: s(7), endSeq: s(7) },
          sourceEventSeqs: [s(7)],
          data: {
            id: "s8",
            role: "user",
            content: [{ type: "text", text: "summary" }],
            source: { kind: "plugin", plugin: "compaction" },
          },
        }]));
        return { nodes, appended, refused };
      }).pipe(Effect.scoped, Effect.provide(layerPostgresStore({ url }))),
    );
    assert.deepEqual(outcome.nodes, [4, 6]);
    assert.equal(outcome.appended._tag, "Success");
    thenFails(failureOf(outcome.refused), "ReplaceShadowsUnansweredCall", {
      callSeq: 7,
      callIds: ["c7"],
    });
  },
);
