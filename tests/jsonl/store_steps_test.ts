/**
 * The steps of the JSONL store, each run alone on a state record over a
 * temp folder, without the store assembled around them.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect, Result } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import { Session } from "@palimpsest/session";
import { nodeAppendIo } from "../../src/fs/durable_file.ts";
import {
  makeJsonlStoreState,
  newHandleState,
  openDescriptor,
  pathOf,
  releaseHandle,
  takeClaim,
} from "../../src/jsonl/store_state.ts";
import { listSessions, statSession } from "../../src/jsonl/store_read.ts";
import { claimsOf, tempDir } from "../_helpers/store.ts";
import { failureOf } from "../_helpers/then.ts";

const stateOver = (root: string) =>
  makeJsonlStoreState(root, nodeAppendIo, "50 millis", undefined);

Deno.test("listSessions lists the ids of session files only, sorted", () => {
  const root = tempDir();
  const store = stateOver(root);
  for (const id of ["b", "a"]) {
    fs.writeFileSync(Result.getOrThrow(pathOf(store, id)), "");
  }
  fs.writeFileSync(path.join(root, "notes.txt"), "");
  fs.writeFileSync(path.join(root, "a.jsonl.checkpoint"), "");
  assert.deepEqual(Effect.runSync(listSessions(store)), ["a", "b"]);
});

Deno.test("statSession fails SessionNotFound without a file and InvalidSessionId on a bad id", () => {
  const store = stateOver(tempDir());
  const missing = failureOf(Effect.runSyncExit(statSession(store, "gone")));
  assert.equal(missing._tag, "SessionNotFound");
  const invalid = failureOf(Effect.runSyncExit(statSession(store, "")));
  assert.equal(invalid._tag, "InvalidSessionId");
});

Deno.test("releaseHandle gives back the descriptor and the claim, once", async () => {
  const store = stateOver(tempDir());
  const file = Result.getOrThrow(pathOf(store, "held"));
  fs.writeFileSync(file, "");
  const state = newHandleState(
    file,
    Session.make({ id: "held", createdAt: 0, isSeeded: false }),
  );
  await Effect.runPromise(takeClaim(state, "held"));
  await Effect.runPromise(openDescriptor(state, "held", undefined));
  assert.notEqual(state.fd, undefined);
  assert.equal(claimsOf(file).length, 1);
  releaseHandle(store, state);
  releaseHandle(store, state);
  assert.equal(state.fd, undefined);
  assert.equal(state.lock, undefined);
  assert.equal(state.closed, true);
  assert.deepEqual(claimsOf(file), []);
});
