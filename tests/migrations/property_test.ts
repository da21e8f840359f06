/**
 * Laws of the migration chain over generated sessions.
 *
 * A generated v3 session (checked against the core's own rules first) is encoded back to v2
 * shape, then to v1 and v0; migrating each must pass every v3 rule, give back the v3 session
 * byte for byte, derive the v2 surface's messages in order, carry the v2 headers' prompts in its
 * system messages, and be deterministic.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { Result } from "effect";
import { decodeEventResult } from "../../src/core/decode.ts";
import { deriveMessages } from "../../src/session/derive.ts";
import { replayResult } from "../../src/surface/mod.ts";
import { makeMigrator, toJsonLine } from "../../migrations/mod.ts";
import {
  actionArb,
  buildV3,
  headerPrompts,
  type Obj,
  systemPrompt,
  toV0,
  toV1,
  toV2,
  v2SurfaceMessages,
} from "./_gen.ts";
import { header, runMigrate } from "./_helpers.ts";

const sessionArb = fc.tuple(
  fc.string({ minLength: 1, maxLength: 6 }),
  fc.array(actionArb, { minLength: 1, maxLength: 40 }),
).map(([id, actions]) =>
  buildV3(id, [{ k: "turn", prompt: 0, explicit: false }, ...actions])
);

const headerOf = (id: string, version: number) => ({ ...header(version), id });

const text = (id: string, events: ReadonlyArray<Obj>): string =>
  [headerOf(id, 3), ...events].map((e) => `${JSON.stringify(e)}\n`).join("");

const migrated = (
  id: string,
  version: number,
  events: ReadonlyArray<Obj>,
): string => {
  const out = runMigrate([headerOf(id, version), ...events]);
  if (!out.ok) {
    throw new Error(`Refused: ${out.error._tag}: ${out.error.message}`);
  }
  return out.text;
};

const params = { numRuns: 150 };

Deno.test("generated v3 sessions pass the core's own rules", () => {
  fc.assert(
    fc.property(sessionArb, (session) => {
      const decoded = session.events.map((e) =>
        Result.getOrThrow(decodeEventResult(e))
      );
      assert.ok(Result.isSuccess(replayResult(decoded)));
    }),
    params,
  );
});

Deno.test("migrating the v2 encoding of a v3 session gives back its bytes", () => {
  fc.assert(
    fc.property(sessionArb, (session) => {
      assert.equal(
        migrated(session.id, 2, toV2(session)),
        text(session.id, session.events),
      );
    }),
    params,
  );
});

Deno.test("v1 and v0 encodings migrate to the same bytes as the v2 encoding", () => {
  fc.assert(
    fc.property(sessionArb, (session) => {
      const v2 = toV2(session);
      const v1 = toV1(v2);
      const expected = migrated(session.id, 2, v2);
      assert.equal(migrated(session.id, 1, v1), expected);
      assert.equal(migrated(session.id, 0, toV0(v1)), expected);
    }),
    params,
  );
});

Deno.test("a migrated v2 log derives the v2 surface's messages and the headers' prompts", () => {
  fc.assert(
    fc.property(sessionArb, (session) => {
      const v2 = toV2(session);
      const migrator = Result.getOrThrow(makeMigrator(headerOf(session.id, 2)));
      const events: Array<Obj> = [];
      v2.forEach((e, i) => {
        for (const m of Result.getOrThrow(migrator.push(e, i + 2))) {
          events.push(JSON.parse(toJsonLine(m)));
        }
      });
      for (const m of Result.getOrThrow(migrator.end())) {
        events.push(JSON.parse(toJsonLine(m)));
      }
      const messages = deriveMessages(migrator.surface());
      assert.deepEqual(
        JSON.parse(JSON.stringify(messages.filter((m) => m.role !== "system"))),
        v2SurfaceMessages(v2),
      );
      const prompts = headerPrompts(v2);
      assert.deepEqual(
        events.filter((e) => e["type"] === "system/message").map(systemPrompt),
        prompts,
      );
      const last = prompts[prompts.length - 1] ?? "";
      const system = messages.filter((m) => m.role === "system");
      assert.deepEqual(
        JSON.parse(JSON.stringify(system.map((m) => m.content))),
        last === "" ? [] : [[{ type: "text", text: last }]],
      );
      if (system.length > 0) assert.equal(messages[0]?.role, "system");
    }),
    params,
  );
});

Deno.test("migration is deterministic and leaves its input unchanged", () => {
  fc.assert(
    fc.property(sessionArb, fc.constantFrom(0, 1, 2), (session, version) => {
      const v2 = toV2(session);
      const events = version === 2
        ? v2
        : version === 1
        ? toV1(v2)
        : toV0(toV1(v2));
      const before = JSON.stringify(events);
      const first = migrated(session.id, version, events);
      assert.equal(JSON.stringify(events), before);
      assert.equal(migrated(session.id, version, events), first);
    }),
    params,
  );
});
