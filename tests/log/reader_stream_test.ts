import assert from "node:assert/strict";
import { Cause, Effect, Exit, Fiber, Stream } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  fileBytes,
  readSessionFile,
  readSessionStream,
} from "@palimpsest/session/jsonl";
import { mulberry32, writeWorkloadFile } from "../_helpers/workload.ts";
import { descriptorsOn } from "../_helpers/descriptors.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";

const largeLog = (() => {
  let file: string | undefined;
  return (): string => {
    if (file === undefined) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reader-stream-"));
      file = path.join(dir, "large.jsonl");
      writeWorkloadFile(file, 20_000);
    }
    return file;
  };
})();

Deno.test("reading a file interrupted inside the stream at any chunk closes the file", async () => {
  const file = largeLog();
  const size = fs.statSync(file).size;
  const chunk = 64 * 1024;
  const chunks = Math.ceil(size / chunk);
  const random = mulberry32(20261203);
  for (let run = 0; run < 25; run++) {
    const stopAt = Math.floor(random() * chunks);
    let pulled = 0;
    const bytes = fileBytes(file, chunk).pipe(
      Stream.tap(() => pulled++ === stopAt ? Effect.interrupt : Effect.void),
    );
    const exit = await Effect.runPromiseExit(readSessionStream(bytes));
    assert.ok(
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause),
      `run ${run}: expected an interruption at chunk ${stopAt}`,
    );
    assert.deepEqual(
      descriptorsOn(file),
      [],
      `run ${run}: a descriptor leaked`,
    );
  }
});

Deno.test("readSessionFile interrupted from another fiber at random points closes the file", async () => {
  const file = largeLog();
  const random = mulberry32(7);
  let interrupted = 0;
  for (let run = 0; run < 25; run++) {
    // The reader yields once a chunk: yield a random number of times
    // before interrupting, so the read is cut anywhere from before the open
    // to after the last chunk.
    const chunks = Math.ceil(fs.statSync(file).size / (1024 * 1024));
    const yields = Math.floor(random() * (chunks + 3));
    const exit = await Effect.runPromise(Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(readSessionFile(file));
      for (let i = 0; i < yields; i++) yield* Effect.yieldNow;
      yield* Fiber.interrupt(fiber);
      return yield* Fiber.await(fiber);
    }));
    if (Exit.isFailure(exit)) {
      assert.ok(Cause.hasInterruptsOnly(exit.cause), `run ${run}: ${exit}`);
      interrupted++;
    }
    assert.deepEqual(
      descriptorsOn(file),
      [],
      `run ${run}: a descriptor leaked`,
    );
  }
  assert.ok(interrupted > 0, "no run was interrupted before the read ended");
});

Deno.test("a session is read from a pipe written in small chunks, torn final line included", async () => {
  const header =
    '{"type":"session","version":3,"id":"piped","createdAt":0,"isSeeded":false}\n';
  const lines = Array.from(
    { length: 50 },
    (_, seq) =>
      `{"type":"user/message","seq":${seq},"time":0,"data":{"id":"u${seq}","role":"user","content":[{"type":"text","text":"line ${seq}"}],"source":{"kind":"user"}},"surfaceOp":"append"}\n`,
  );
  const torn = '{"type":"user/message","seq":50,"ti';
  const text = header + lines.join("") + torn;
  // The child writes the log 7 bytes at a time, flushing each piece.
  const script = `
    const text = ${JSON.stringify(text)};
    const bytes = new TextEncoder().encode(text);
    for (let at = 0; at < bytes.length; at += 7) {
      await Deno.stdout.write(bytes.subarray(at, at + 7));
      if (at % 700 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let pieces = 0;
  const bytes = Stream.fromReadableStream({
    evaluate: () => child.stdout,
    onError: (cause) => new Error(`pipe failed: ${String(cause)}`),
  }).pipe(Stream.tap(() => Effect.sync(() => pieces++)));
  const log = await Effect.runPromise(readSessionStream(bytes));
  const status = await child.status;
  assert.equal(status.code, 0);
  assert.ok(pieces > 1, "the log arrived in one piece; the test needs many");
  assert.equal(log.session.header.id, "piped");
  assert.deepEqual(
    log.events.map((event) => event.seq),
    Array.from({ length: 50 }, (_, seq) => seq),
  );
  const good = new TextEncoder().encode(header + lines.join("")).length;
  assert.deepEqual(log.report.tornTail, {
    offset: good,
    bytes: new TextEncoder().encode(torn).length,
  });
});

Deno.test("a stream that fails mid-log fails the read with its own error", async () => {
  const header =
    '{"type":"session","version":3,"id":"s","createdAt":0,"isSeeded":false}\n';
  const bytes = Stream.concat(
    Stream.make(new TextEncoder().encode(header)),
    Stream.fail("socket reset" as const),
  );
  const exit = await Effect.runPromiseExit(readSessionStream(bytes));
  assert.ok(Exit.isFailure(exit));
  assert.deepEqual(Cause.squash(exit.cause), "socket reset");
});

Deno.test("reading stops pulling at the first bad line", async () => {
  const header =
    '{"type":"session","version":3,"id":"s","createdAt":0,"isSeeded":false}\n';
  let pulledAfterBadLine = 0;
  const bytes = Stream.concat(
    Stream.make(new TextEncoder().encode(header + "not json\n")),
    Stream.fromEffectRepeat(Effect.sync(() => {
      pulledAfterBadLine++;
      return new TextEncoder().encode("\n");
    })),
  );
  const exit = await Effect.runPromiseExit(readSessionStream(bytes));
  thenFails(failureOf(exit), "CorruptLine", { line: 2 });
  assert.equal(pulledAfterBadLine, 0);
});
