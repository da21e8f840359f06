/**
 * `SessionLocked` reads well whoever holds the claim: a process named by
 * its pid (JSONL), a PostgreSQL server process with its application and
 * client, or a holder no one could name (never `process "undefined"`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { SessionLocked } from "@palimpsest/session";

Deno.test("SessionLocked names a holder process by its pid", () => {
  assert.equal(
    new SessionLocked({ id: "s", pid: 42 }).message,
    'Session "s" is open for writing by process "42"; close that writer or open for reading',
  );
});

Deno.test("SessionLocked names a PostgreSQL lease's holder: its process, program, host and when the lease runs out", () => {
  assert.equal(
    new SessionLocked({
      id: "s",
      pid: 4242,
      application: "palimpsest",
      client: "worker-3",
      leaseUntil: Date.UTC(2026, 11, 7, 10, 0, 15),
    }).message,
    'Session "s" is open for writing by process "4242" (application "palimpsest", host "worker-3"), whose lease runs until 2026-12-07T10:00:15.000Z unless renewed; close that writer or open for reading',
  );
  assert.equal(
    new SessionLocked({ id: "s", pid: undefined, client: "worker-3" }).message,
    'Session "s" is open for writing by a writer (host "worker-3"); close that writer or open for reading',
  );
});

Deno.test("SessionLocked without a known holder says another writer", () => {
  const message = new SessionLocked({ id: "s", pid: undefined }).message;
  assert.equal(
    message,
    'Session "s" is open for writing by another writer; close that writer or open for reading',
  );
});
