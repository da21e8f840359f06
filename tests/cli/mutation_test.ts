import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { recordingIo, runCli } from "@palimpsest/session/cli";
import { fixture, tempDir } from "./_cli.ts";

const valid = fs.readFileSync(fixture("valid.jsonl"));
const dir = tempDir();

const mutation = fc.oneof(
  fc.record({
    kind: fc.constant("flip" as const),
    at: fc.nat(),
    byte: fc.integer({ min: 0, max: 255 }),
  }),
  fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant("drop-line" as const),
    at: fc.nat(),
  }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

const apply = (bytes: Uint8Array, m: Mutation): Uint8Array => {
  if (bytes.length === 0) return bytes;
  const at = m.at % bytes.length;
  switch (m.kind) {
    case "flip": {
      const out = bytes.slice();
      out[at] = m.byte;
      return out;
    }
    case "cut":
      return bytes.slice(0, at);
    case "drop-line": {
      const lines = new TextDecoder().decode(bytes).split("\n");
      lines.splice(at % lines.length, 1);
      return new TextEncoder().encode(lines.join("\n"));
    }
  }
};

Deno.test("mutated logs give exit 0 or 1 and a tagged rule, never a crash", async () => {
  let n = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(mutation, { minLength: 1, maxLength: 3 }),
      async (mutations) => {
        const bytes = mutations.reduce(apply, valid);
        const file = path.join(dir, `m${n++}.jsonl`);
        fs.writeFileSync(file, bytes);
        for (const command of ["verify", "derive", "stats"]) {
          const io = recordingIo();
          const code = await runCli([command, file, "--json"], io);
          assert.ok(code === 0 || code === 1, `${command}: exit ${code}`);
          const out = JSON.parse(io.out());
          if (code === 1) {
            assert.equal(typeof out.error.tag, "string");
            assert.notEqual(out.error.tag, "InternalError");
            assert.notEqual(out.error.tag, "UnknownError");
          }
        }
      },
    ),
    { numRuns: 300, seed: 6 },
  );
});
