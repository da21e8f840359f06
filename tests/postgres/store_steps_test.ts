/**
 * Steps of the PostgreSQL store that need no server: the options resolved,
 * and how an append the server refused is reported.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Duration, Effect, Redacted } from "effect";
import { SqlError, UnknownError } from "effect/sql/SqlError";
import { Session, SessionSeq, WriterClaimLost } from "@palimpsest/session";
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
    lease: "500 millis",
  });
  assert.equal(
    Redacted.value(settings.url),
    "postgres://me:secret@db.example:5432/app",
  );
  assert.ok(!settings.address.includes("secret"));
  assert.equal(settings.pageSize, 1);
  assert.equal(settings.leaseSeconds, 1);
  assert.equal(resolveSettings({ url: "postgres://db" }).leaseSeconds, 15);
  assert.equal(
    resolveSettings({ url: "postgres://db", deadWriterSeconds: 7 })
      .leaseSeconds,
    7,
  );
  assert.equal(
    resolveSettings({ url: "postgres://db", lease: "30 seconds" }).leaseSeconds,
    30,
  );
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
  refusal: () => Effect.die("refusal"),
  guard: () => Effect.die("guard"),
  keepAlive: () => Effect.die("keepAlive"),
  release: () => Effect.die("release"),
  settleUnanswered: () => Effect.die("settleUnanswered"),
  writerEnded: () => Effect.die("writerEnded"),
  leaseSeconds: 15,
};

const store = {
  failed: failedAt("postgres://db"),
  claims: unasked,
  address: "postgres://db",
};
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

/** A writer's state and how `appendEnded` reports a refusal `error`. */
const refused = (error: SqlError | WriterClaimLost) => {
  const state = readerState(session, { seq: 0, since: undefined });
  const failure = failureOf(Effect.runSyncExit(appendEnded(store, state, {
    _tag: "NotCommitted",
    error,
  }, batch)));
  return { state, error: failure };
};

/** A writer's state and how `appendEnded` reports a failure with `code`. */
const notCommitted = (code: string) =>
  refused(new SqlError({ reason: new UnknownError({ cause: { code } }) }));

Deno.test("appendEnded: a lease taken over stops the writer for good", () => {
  const lost = new WriterClaimLost({ id: "s", cause: "taken over" });
  const { state, error } = refused(lost);
  assert.equal(error, lost);
  assert.equal(state.lostClaim, lost);
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
