import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Effect } from "effect";
import { makeJsonlStore } from "@palimpsest/session";
import { boundsCases, followVerdict } from "../_helpers/follow_bounds.ts";
import { tempDir } from "../_helpers/store.ts";

Deno.test("the JSONL follow refuses each amplification input as the reader does", async () => {
  const cases = boundsCases();
  // The inputs are refused by the reader in several ways (dense lines,
  // source runs past the line's or the read's bound), and one is served.
  const tags = new Set(cases.map((c) => c.reader.innerTag ?? c.reader.tag));
  assert.ok(tags.has("TooManyContainers") && tags.has("InvalidSourceRange"));
  assert.ok(tags.has("events"));
  for (const c of cases) {
    // Given the input as a session's file in a store's folder.
    const root = tempDir("follow-bounds-");
    try {
      fs.writeFileSync(path.join(root, "a.jsonl"), c.text);
      // When the store follows it from the start.
      const verdict = await Effect.runPromise(Effect.scoped(Effect.flatMap(
        makeJsonlStore({ root, pollInterval: "10 millis" }),
        (store) => followVerdict(store.follow("a"), c.lines.length),
      )));
      // Then it stops where the reader stops, for the same reason.
      assert.deepEqual(verdict, c.reader, c.name);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }
});
