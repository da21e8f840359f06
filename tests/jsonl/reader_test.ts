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
    const result = read("");
    assert.ok(Result.isFailure(result));
    thenFails(result.failure, "MissingHeader");
  });
  await t.step("a torn header has no header", () => {
    const result = read(header.slice(0, 20));
    assert.ok(Result.isFailure(result));
    thenFails(result.failure, "MissingHeader");
    assert.equal(
      result.failure._tag === "MissingHeader" && result.failure.bytes,
      20,
    );
  });
});

Deno.test("corrupt lines are never skipped", async (t) => {
  const text = header + turnStart(0) + "{not json\n" + user(2);
  await t.step("strict: CorruptLine with its line and inner error", () => {
    const result = read(text);
    assert.ok(Result.isFailure(result));
    const error = result.failure;
    thenFails(error, "CorruptLine");
    if (error._tag !== "CorruptLine") return;
    assert.equal(error.line, 3);
    assert.equal(error.innerTag, "InvalidJson");
    thenFails(error.inner, "InvalidJson");
    assert.equal(error.excerpt, "{not json");
  });
  await t.step("recover: the prefix is served and the stop reported", () => {
    const log = ok(text, { recover: true });
    assert.deepEqual(log.events.map((e) => e.seq), [0]);
    assert.equal(log.session.surface.nextSeq, 1);
    assert.equal(log.report.stoppedAt?._tag, "CorruptLine");
    assert.equal(log.report.stoppedAt?.line, 3);
    assert.equal(log.report.lines, 2);
    assert.equal(
      log.report.bytes,
      encoder.encode(header + turnStart(0)).length,
    );
  });
  await t.step("a line that breaks an event rule names the rule", () => {
    const bad = '{"type":"user/message","seq":1,"time":0,"data":{}}\n';
    const result = read(header + turnStart(0) + bad);
    assert.ok(Result.isFailure(result));
    thenFails(result.failure, "CorruptLine");
    assert.equal(
      result.failure._tag === "CorruptLine" && result.failure.innerTag,
      "InvalidEventData",
    );
  });
  await t.step("a blank line is corrupt", () => {
    const result = read(header + "\n" + turnStart(0));
    assert.ok(Result.isFailure(result));
    assert.equal(
      result.failure._tag === "CorruptLine" && result.failure.line,
      2,
    );
  });
  await t.step("a fold error names its line", () => {
    const result = read(header + turnStart(0) + user(1) + user(3) + user(4));
    assert.ok(Result.isFailure(result));
    const error = result.failure;
    thenFails(error, "FoldFailed");
    if (error._tag !== "FoldFailed") return;
    assert.equal(error.line, 4);
    assert.equal(error.seq, 3);
    assert.equal(error.innerTag, "NonContiguousSeq");
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
    const result = read("{nope\n" + turnStart(0), { recover: true });
    assert.ok(Result.isFailure(result));
    assert.equal(
      result.failure._tag === "CorruptLine" && result.failure.line,
      1,
    );
    const notSession = read('{"type":"other"}\n');
    assert.equal(
      Result.isFailure(notSession) &&
        notSession.failure._tag === "CorruptLine" &&
        notSession.failure.innerTag,
      "InvalidHeader",
    );
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
    const result = read(bytes);
    assert.ok(Result.isFailure(result));
    assert.equal(
      result.failure._tag === "CorruptLine" && result.failure.innerTag,
      "InvalidUtf8",
    );
    assert.equal(
      result.failure._tag === "CorruptLine" && result.failure.line,
      3,
    );
  });
});

Deno.test("versions", async (t) => {
  await t.step("a newer header is FormatTooNew", () => {
    const result = read(
      '{"type":"session","version":4,"id":"s","createdAt":0,"isSeeded":false}\n',
    );
    assert.ok(Result.isFailure(result));
    thenFails(result.failure, "FormatTooNew");
    assert.equal(
      result.failure._tag === "FormatTooNew" && result.failure.version,
      4,
    );
  });
  const old = '{"type":"session","version":2,"id":"s","createdAt":0}\n' +
    '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}\n';
  await t.step("an older header without migration is FormatTooOld", () => {
    const result = read(old);
    assert.ok(Result.isFailure(result));
    thenFails(result.failure, "FormatTooOld");
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
    const result = read(header + user(0), { maxLineBytes: 100 });
    assert.ok(Result.isFailure(result));
    thenFails(result.failure, "LineTooLong");
    if (result.failure._tag !== "LineTooLong") return;
    assert.equal(result.failure.line, 2);
    assert.equal(result.failure.offset, encoder.encode(header).length);
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
    const result = read(header + "x".repeat(200), { maxLineBytes: 100 });
    assert.ok(Result.isFailure(result));
    thenFails(result.failure, "LineTooLong");
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
  thenFails(missing.failure, "JsonlIoError");
  assert.equal(
    missing.failure._tag === "JsonlIoError" && missing.failure.code,
    "ENOENT",
  );
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
  const corruptLine = (text: string) => {
    const result = read(text);
    assert.ok(Result.isFailure(result));
    const error = result.failure;
    assert.equal(error._tag, "CorruptLine");
    return error._tag === "CorruptLine" ? error : assert.fail();
  };

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
    assert.equal(
      error.inner._tag === "InvalidSourceRange" && error.inner.problem,
      "too-many",
    );
  });

  await t.step("a wrong seq with a small run is still the fold's error", () => {
    const result = read(header + turnStart(0) + citing(5, [[0, 2]]));
    assert.ok(Result.isFailure(result));
    assert.equal(result.failure._tag, "CorruptLine");
    const folded = read(header + turnStart(0) + citing(5, [[0, 0], 2]));
    assert.ok(Result.isFailure(folded));
    assert.equal(folded.failure._tag, "FoldFailed");
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
