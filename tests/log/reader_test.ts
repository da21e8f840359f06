import assert from "node:assert/strict";
import fc from "fast-check";
import { Effect, Result } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  type LoadedLog,
  type MigrationInput,
  type ReadOptions,
  readSessionBytes,
  readSessionFile,
} from "@palimpsest/session/jsonl";
import { headerLine } from "../_helpers/build.ts";
import { tempDir } from "../_helpers/store.ts";
import { thenFails } from "../_helpers/then.ts";

const encoder = new TextEncoder();
const header = headerLine("s");
const turnStart = (seq: number) =>
  `{"type":"turn/start","seq":${seq},"time":0,"data":{"turn":0}}\n`;
const user = (seq: number) =>
  `{"type":"user/message","seq":${seq},"time":0,"data":{"id":"u${seq}","role":"user","content":[{"type":"text","text":"héllo ${seq}"}],"source":{"kind":"user"}},"surfaceOp":"append"}\n`;

const read = <E = never>(text: string | Uint8Array, options?: ReadOptions<E>) =>
  Effect.runSync(
    Effect.result(
      readSessionBytes(
        typeof text === "string" ? encoder.encode(text) : text,
        options,
      ),
    ),
  );

const ok = (text: string, options?: ReadOptions): LoadedLog =>
  Result.getOrThrow(read(text, options));

/** The error of a read that must be refused. */
const refusal = <E = never>(
  text: string | Uint8Array,
  options?: ReadOptions<E>,
) => {
  const result = read(text, options);
  if (Result.isSuccess(result)) return assert.fail("Expected a refusal");
  return result.failure;
};

const chunked = (bytes: Uint8Array, sizes: number[]): Uint8Array[] => {
  const out: Uint8Array[] = [];
  let at = 0;
  let i = 0;
  while (at < bytes.length) {
    const size = Math.max(1, sizes[i++ % sizes.length] ?? 1);
    out.push(bytes.slice(at, at + size));
    at += size;
  }
  return out;
};

Deno.test("readSessionBytes reads a log", async (t) => {
  await t.step(
    "it returns the events, the folded surface and what it read",
    () => {
      const log = ok(header + turnStart(0) + user(1) + user(2));
      assert.equal(log.version, 3);
      assert.equal(log.session.header.id, "s");
      assert.deepEqual(log.events.map((e) => e.seq), [0, 1, 2]);
      assert.equal(log.session.surface.length, 2);
      assert.equal(log.report.lines, 4);
      assert.equal(log.report.tornTail, undefined);
      assert.equal(
        log.report.bytes,
        encoder.encode(header + turnStart(0) + user(1) + user(2)).length,
      );
    },
  );
  await t.step("how the bytes are chunked changes nothing", () => {
    const text = header + turnStart(0) + user(1) + user(2) + '{"type":"tu';
    const bytes = encoder.encode(text);
    const whole = ok(text);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 90 }), {
          minLength: 1,
          maxLength: 8,
        }),
        (sizes) => {
          const log = Effect.runSync(
            readSessionBytes(chunked(bytes, sizes)),
          );
          assert.deepEqual(log.events, whole.events);
          assert.deepEqual(log.report, whole.report);
        },
      ),
      { numRuns: 60 },
    );
  });
  await t.step("a header-only file is an empty session", () => {
    const log = ok(header);
    assert.equal(log.events.length, 0);
    assert.equal(log.report.lines, 1);
    assert.equal(log.session.surface.nextSeq, 0);
  });
});

Deno.test("torn tails", async (t) => {
  await t.step("a final line without newline is reported, not served", () => {
    const good = header + turnStart(0);
    const log = ok(`${good}${user(1).slice(0, -1)}`);
    assert.equal(log.events.length, 1);
    assert.deepEqual(log.report.tornTail, {
      offset: encoder.encode(good).length,
      bytes: encoder.encode(user(1)).length - 1,
    });
    assert.equal(log.report.bytes, encoder.encode(good).length);
  });
  await t.step("an empty file has no header", () => {
    thenFails(refusal(""), "MissingHeader");
  });
  await t.step("a torn header has no header", () => {
    thenFails(refusal(header.slice(0, 20)), "MissingHeader", { bytes: 20 });
  });
});

Deno.test("corrupt lines are never skipped", async (t) => {
  const text = header + turnStart(0) + "{not json\n" + user(2);
  await t.step("strict: CorruptLine with its line and inner error", () => {
    const error = thenFails(refusal(text), "CorruptLine", {
      line: 3,
      innerTag: "InvalidJson",
      excerpt: "{not json",
    });
    thenFails(error.inner, "InvalidJson");
  });
  await t.step("recover: the prefix is served and the stop reported", () => {
    const log = ok(text, { recover: true });
    assert.deepEqual(log.events.map((e) => e.seq), [0]);
    assert.equal(log.session.surface.nextSeq, 1);
    assert.ok(log.report.stoppedAt !== undefined);
    thenFails(log.report.stoppedAt, "CorruptLine", { line: 3 });
    assert.equal(log.report.lines, 2);
    assert.equal(
      log.report.bytes,
      encoder.encode(header + turnStart(0)).length,
    );
  });
  await t.step("a line that breaks an event rule names the rule", () => {
    const bad = '{"type":"user/message","seq":1,"time":0,"data":{}}\n';
    thenFails(refusal(header + turnStart(0) + bad), "CorruptLine", {
      innerTag: "InvalidEventData",
    });
  });
  await t.step("a blank line is corrupt", () => {
    thenFails(refusal(header + "\n" + turnStart(0)), "CorruptLine", {
      line: 2,
    });
  });
  await t.step("a fold error names its line", () => {
    thenFails(
      refusal(header + turnStart(0) + user(1) + user(3) + user(4)),
      "FoldFailed",
      { line: 4, seq: 3, innerTag: "NonContiguousSeq" },
    );
    const recovered = ok(header + turnStart(0) + user(1) + user(3) + user(4), {
      recover: true,
    });
    assert.deepEqual(recovered.events.map((e) => e.seq), [0, 1]);
    assert.equal(recovered.session.surface.nextSeq, 2);
    assert.equal(recovered.report.stoppedAt?.line, 4);
    assert.equal(
      recovered.report.bytes,
      encoder.encode(header + turnStart(0) + user(1)).length,
    );
  });
  await t.step("a corrupt header fails even with recover", () => {
    thenFails(
      refusal("{nope\n" + turnStart(0), { recover: true }),
      "CorruptLine",
      { line: 1 },
    );
    thenFails(refusal('{"type":"other"}\n'), "CorruptLine", {
      innerTag: "InvalidHeader",
    });
  });
  await t.step("invalid UTF-8 is CorruptLine InvalidUtf8", () => {
    const bytes = new Uint8Array([
      ...encoder.encode(header + turnStart(0)),
      0x7b,
      0xff,
      0xfe,
      0x7d,
      0x0a,
      ...encoder.encode(user(2)),
    ]);
    thenFails(refusal(bytes), "CorruptLine", {
      innerTag: "InvalidUtf8",
      line: 3,
    });
  });
});

Deno.test("the header version decides how a log is read", async (t) => {
  await t.step("a newer header is FormatTooNew", () => {
    const error = refusal(
      '{"type":"session","version":4,"id":"s","createdAt":0,"isSeeded":false}\n',
    );
    thenFails(error, "FormatTooNew", { version: 4 });
  });
  const old = '{"type":"session","version":2,"id":"s","createdAt":0}\n' +
    '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}\n';
  await t.step("an older header without migration is FormatTooOld", () => {
    thenFails(refusal(old), "FormatTooOld");
  });
  await t.step("a migration plugs in and its output is decoded", () => {
    let seen: MigrationInput | undefined;
    const log = ok(old, {
      migrate: (input) => {
        seen = input;
        return Effect.succeed({
          header: { id: "s", createdAt: 0, isSeeded: false },
          events: input.lines,
        });
      },
    });
    assert.equal(seen?.version, 2);
    assert.equal(seen?.lines.length, 1);
    assert.equal(log.version, 2);
    assert.equal(log.events.length, 1);
  });
  await t.step("a migration's own error comes through", () => {
    const result = Effect.runSync(Effect.result(readSessionBytes(
      encoder.encode(old),
      { migrate: () => Effect.fail("edge missing" as const) },
    )));
    assert.ok(Result.isFailure(result));
    assert.equal(result.failure, "edge missing");
  });
});

Deno.test("CRLF line endings are accepted and counted", () => {
  const text = (header + turnStart(0) + user(1)).replaceAll("\n", "\r\n");
  const log = ok(text);
  assert.equal(log.events.length, 2);
  assert.equal(log.report.crlfLines, 3);
  assert.equal(log.report.bytes, encoder.encode(text).length);
  assert.equal(log.events[1]?.type, "user/message");
});

Deno.test("the line length limit", async (t) => {
  await t.step("a long line in one chunk is LineTooLong", () => {
    thenFails(refusal(header + user(0), { maxLineBytes: 100 }), "LineTooLong", {
      line: 2,
      offset: encoder.encode(header).length,
    });
  });
  await t.step("a long line across chunks is LineTooLong", () => {
    const bytes = encoder.encode(header + user(0));
    const result = Effect.runSync(Effect.result(
      readSessionBytes(chunked(bytes, [7]), { maxLineBytes: 100 }),
    ));
    assert.ok(Result.isFailure(result));
    thenFails(result.failure, "LineTooLong");
  });
  await t.step("a torn tail longer than the limit is LineTooLong", () => {
    thenFails(
      refusal(header + "x".repeat(200), { maxLineBytes: 100 }),
      "LineTooLong",
    );
  });
  await t.step("lines at the limit are read", () => {
    const line = user(0);
    const log = ok(header + line, {
      maxLineBytes: encoder.encode(line).length - 1,
    });
    assert.equal(log.events.length, 1);
  });
});

Deno.test("readSessionFile streams a file", async () => {
  const dir = tempDir();
  const file = path.join(dir, "a.jsonl");
  let text = header;
  for (let i = 0; i < 5000; i++) text += user(i);
  fs.writeFileSync(file, text + '{"torn');
  const log = await Effect.runPromise(readSessionFile(file));
  assert.equal(log.events.length, 5000);
  assert.deepEqual(log.report.tornTail, {
    offset: encoder.encode(text).length,
    bytes: 6,
  });
  const missing = await Effect.runPromise(
    Effect.result(readSessionFile(path.join(dir, "none.jsonl"))),
  );
  assert.ok(Result.isFailure(missing));
  thenFails(missing.failure, "FileIoError", { code: "ENOENT" });
  fs.rmSync(dir, { recursive: true });
});

Deno.test("sizes read from a line are bounded before anything is allocated", async (t) => {
  const citing = (seq: unknown, sources: unknown) =>
    `${
      JSON.stringify({
        type: "user/message",
        seq,
        time: 0,
        data: { id: "m", role: "user", content: [], source: { kind: "user" } },
        surfaceOp: "append",
        sourceEventSeqs: sources,
      })
    }\n`;
  const corruptLine = (text: string) => thenFails(refusal(text), "CorruptLine");

  await t.step("a run is not expanded while the seq is unreadable", () => {
    const error = corruptLine(
      header + citing("x", [[0, 9007199254740990]]),
    );
    assert.deepEqual([error.line, error.innerTag], [2, "InvalidSessionSeq"]);
  });

  await t.step("a run never expands past the events before its line", () => {
    const error = corruptLine(
      header + turnStart(0) + citing(9007199254740991, [[0, 9007199254740990]]),
    );
    assert.deepEqual([error.line, error.innerTag], [3, "InvalidSourceRange"]);
    thenFails(error.inner, "InvalidSourceRange", { problem: "too-many" });
  });

  await t.step("a wrong seq with a small run is still the fold's error", () => {
    thenFails(
      refusal(header + turnStart(0) + citing(5, [[0, 2]])),
      "CorruptLine",
    );
    thenFails(
      refusal(header + turnStart(0) + citing(5, [[0, 0], 2])),
      "FoldFailed",
    );
  });

  await t.step(
    "runs citing the whole log on every line hit the log's budget",
    () => {
      let text = header;
      for (let k = 0; k < 300; k++) {
        text += k < 3 ? user(k) : citing(k, [[0, k - 1]]);
      }
      const log = ok(text);
      assert.equal(log.events.length, 300);
      let big = header;
      for (let k = 0; k < 1200; k++) {
        big += k < 3 ? user(k) : citing(k, [[0, k - 1]]);
      }
      const error = corruptLine(big);
      assert.equal(error.innerTag, "InvalidSourceRange");
      assert.ok(error.line > 300 && error.line < 1200);
    },
  );
});
