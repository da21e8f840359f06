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

Deno.test("SessionLocked names a PostgreSQL holder's process, application and client", () => {
  assert.equal(
    new SessionLocked({
      id: "s",
      pid: 4242,
      application: "palimpsest writer",
      client: "10.0.0.5:53122",
    }).message,
    'Session "s" is open for writing by server process "4242" (application "palimpsest writer", client "10.0.0.5:53122"); close that writer or open for reading',
  );
  assert.equal(
    new SessionLocked({ id: "s", pid: undefined, client: "local" }).message,
    'Session "s" is open for writing by a server process (client "local"); close that writer or open for reading',
  );
});

Deno.test("SessionLocked without a known holder says another writer", () => {
  const message = new SessionLocked({ id: "s", pid: undefined }).message;
  assert.equal(
    message,
    'Session "s" is open for writing by another writer; close that writer or open for reading',
  );
});
