/**
 * Steps of the PostgreSQL store that need no server: the options resolved,
 * and how an append whose transaction ended before `COMMIT` is reported.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Duration, Effect, Redacted } from "effect";
import { SqlError, UnknownError } from "effect/sql/SqlError";
import { Session, SessionSeq } from "@palimpsest/session";
import { failedAt } from "../../src/postgres/rows.ts";
import type { Claims } from "../../src/postgres/claim.ts";
import { appendEnded } from "../../src/postgres/store_write.ts";
import {
  readerState,
  resolveSettings,
} from "../../src/postgres/store_state.ts";
import { failureOf } from "../_helpers/then.ts";

Deno.test("resolveSettings applies the defaults and keeps the password out of the address", () => {
  const settings = resolveSettings({
    url: "postgres://me:secret@db.example:5432/app",
    pageSize: 0,
    deadWriterSeconds: 1,
  });
  assert.equal(
    Redacted.value(settings.url),
    "postgres://me:secret@db.example:5432/app",
  );
  assert.ok(!settings.address.includes("secret"));
  assert.equal(settings.pageSize, 1);
  assert.equal(settings.dead, 3);
  assert.equal(settings.maxConnections, 10);
  assert.equal(Duration.toMillis(settings.pollInterval), 1000);
  assert.notEqual(settings.policy, undefined);
  assert.equal(
    resolveSettings({ url: "postgres://db", checkpoints: false }).policy,
    undefined,
  );
});

// An append that ended before COMMIT settles nothing: the claims are not asked.
const unasked: Claims = {
  claim: () => Effect.die("claim"),
  release: () => Effect.die("release"),
  settle: () => Effect.die("settle"),
  settleUnanswered: () => Effect.die("settleUnanswered"),
  writerEnded: () => Effect.die("writerEnded"),
};

const store = { failed: failedAt("postgres://db"), claims: unasked };
const session = Session.make({ id: "s", createdAt: 0, isSeeded: false });
const batch = {
  id: "s",
  from: SessionSeq.make(0),
  to: 1,
  rows: [],
  bytes: 0,
  address: "postgres://db",
  next: session,
};

/** A writer's state and how `appendEnded` reports a failure with `code`. */
const notCommitted = (code: string) => {
  const state = readerState(session, { seq: 0, since: undefined });
  const error = failureOf(Effect.runSyncExit(appendEnded(store, state, {
    _tag: "NotCommitted",
    error: new SqlError({ reason: new UnknownError({ cause: { code } }) }),
  }, batch)));
  return { state, error };
};

Deno.test("appendEnded: a connection broken before COMMIT loses the claim for good", () => {
  const { state, error } = notCommitted("57P01");
  assert.equal(error._tag, "WriterClaimLost");
  assert.equal(state.lostClaim, error);
});

Deno.test("appendEnded: a taken seq is a StorageError and the writer keeps its claim", () => {
  const { state, error } = notCommitted("23505");
  assert.equal(error._tag, "StorageError");
  assert.equal(error._tag === "StorageError" ? error.code : undefined, "23505");
  assert.equal(state.lostClaim, undefined);
});

Deno.test("appendEnded: a committed append succeeds", () => {
  const state = readerState(session, { seq: 0, since: undefined });
  Effect.runSync(
    appendEnded(store, state, { _tag: "Committed", value: undefined }, batch),
  );
  assert.equal(state.lostClaim, undefined);
});
