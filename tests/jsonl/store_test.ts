import assert from "node:assert/strict";
import { Effect, Exit, Result, Scope } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawn, spawnSync } from "node:child_process";
import {
  AppendOutcomeUnknown,
  checkTranscript,
  deriveMessages,
  type EventDraft,
  extensionType,
  Session,
  SessionSeq,
} from "@palimpsest/session";
import { encodeSessionId, readSessionFile } from "@palimpsest/session/jsonl";
import { makeJsonlStoreWith } from "../../src/jsonl/store.ts";
import type { AppendIo } from "../../src/fs/durable_file.ts";
import {
  assistantCallDraft,
  drafts,
  headerLine,
  toolCallDraft,
  turnBatches,
} from "../_helpers/build.ts";
import {
  claimsOf,
  tempDir,
  useStore,
  useStoreExit,
} from "../_helpers/store.ts";
import { failureOf, successOf, thenFails } from "../_helpers/then.ts";
import { partialData } from "../_helpers/partial_stream.ts";

const header = (id: string) => ({ id, createdAt: 1, isSeeded: false });
const fileOf = (root: string, id: string) =>
  path.join(root, `${Result.getOrThrow(encodeSessionId(id))}.jsonl`);
const helper = new URL("../store/jsonl_writer.ts", import.meta.url).pathname;

Deno.test("the store round-trips a session", async (t) => {
  const root = tempDir();
  const written = await useStore(root, (store) =>
    Effect.gen(function* () {
      const handle = yield* store.create(header("round"));
      for (let turn = 0; turn < 3; turn++) {
        for (const batch of turnBatches(turn)) {
          yield* store.append(handle, batch);
        }
      }
      yield* store.append(handle, [{
        type: "user/message",
        surfaceOp: {
          op: "replace",
          startSeq: SessionSeq.make(2),
          endSeq: SessionSeq.make(15),
        },
        sourceEventSeqs: Array.from(
          { length: 14 },
          (_, i) => SessionSeq.make(i + 2),
        ),
        data: {
          id: "summary",
          role: "user",
          content: [{ type: "text", text: "summary" }],
          source: { kind: "plugin", plugin: "compaction" },
        },
      }, {
        type: extensionType("harness/note"),
        ignorable: true,
        data: { z: 1, a: [2] },
      }]);
      const session = handle.session;
      yield* store.close(handle);
      return session;
    }));
  const file = fileOf(root, "round");
  const before = fs.readFileSync(file);

  await t.step(
    "events and derived messages are equal after reopen",
    async () => {
      const read = await useStore(root, (store) =>
        Effect.gen(function* () {
          const handle = yield* store.open("round");
          return handle.session;
        }));
      assert.deepEqual(
        Result.getOrThrow(Session.events(read)),
        Result.getOrThrow(Session.events(written)),
      );
      assert.deepEqual(
        deriveMessages(read.surface),
        deriveMessages(written.surface),
      );
      assert.deepEqual(read.header, header("round"));
      assert.deepEqual(checkTranscript(deriveMessages(read.surface)), []);
      assert.equal(read.surface.replacements, 1);
      assert.ok(
        fs.readFileSync(file, "utf8").includes('"sourceEventSeqs":[[2,15]]'),
      );
    },
  );
  await t.step(
    "opening and closing an unchanged log keeps its bytes",
    async () => {
      await useStore(root, (store) =>
        Effect.gen(function* () {
          const writer = yield* store.open("round", { mode: "write" });
          yield* store.close(writer);
          const reader = yield* store.open("round");
          yield* store.close(reader);
          const again = yield* store.open("round", { mode: "write" });
          yield* store.repair(again);
          yield* store.close(again);
        }));
      assert.deepEqual(fs.readFileSync(file), before);
      assert.deepEqual(claimsOf(file), []);
    },
  );
  await t.step(
    "list names the stored sessions and stat reports each one",
    async () => {
      const [ids, stat] = await useStore(
        root,
        (store) =>
          Effect.gen(function* () {
            const handle = yield* store.create(header("../other"));
            yield* store.close(handle);
            return [yield* store.list(), yield* store.stat("round")] as const;
          }),
      );
      assert.deepEqual(ids, ["../other", "round"]);
      assert.equal(stat.bytes, before.length);
      assert.equal(stat.locked, false);
    },
  );
  fs.rmSync(root, { recursive: true });
});

/** A fresh folder whose store holds one empty session `id`. */
const rootWithEmptySession = async (id: string): Promise<string> => {
  const root = tempDir();
  await useStore(root, (store) =>
    Effect.gen(function* () {
      yield* store.close(yield* store.create(header(id)));
    }));
  return root;
};

Deno.test("store errors", async (t) => {
  const root = await rootWithEmptySession("s");
  await t.step("create never overwrites", async () => {
    const exit = await useStoreExit(root, (s) => s.create(header("s")));
    const error = failureOf(exit);
    thenFails(error, "SessionAlreadyExists");
  });
  await t.step("a missing session is SessionNotFound", async () => {
    const exit = await useStoreExit(root, (s) => s.open("nope"));
    thenFails(failureOf(exit), "SessionNotFound");
    const stat = await useStoreExit(root, (s) => s.stat("nope"));
    thenFails(failureOf(stat), "SessionNotFound");
  });
  await t.step("an empty id is refused", async () => {
    const exit = await useStoreExit(root, (s) => s.open(""));
    const error = failureOf(exit);
    thenFails(error, "InvalidSessionId");
  });
  await t.step("read handles refuse appends", async () => {
    const exit = await useStoreExit(root, (store) =>
      Effect.gen(function* () {
        const reader = yield* store.open("s");
        return yield* store.append(reader, [drafts.user("u", "x")]);
      }));
    thenFails(failureOf(exit), "ReadOnlyHandle");
  });
  await t.step("closed handles refuse appends", async () => {
    const exit = await useStoreExit(root, (store) =>
      Effect.gen(function* () {
        const writer = yield* store.open("s", { mode: "write" });
        yield* store.close(writer);
        yield* store.close(writer);
        return yield* store.append(writer, [drafts.user("u", "x")]);
      }));
    thenFails(failureOf(exit), "HandleClosed");
  });
  await t.step("a rejected batch writes nothing", async () => {
    const file = fileOf(root, "s");
    const before = fs.readFileSync(file);
    const exit = await useStoreExit(root, (store) =>
      Effect.gen(function* () {
        const writer = yield* store.open("s", { mode: "write" });
        return yield* store.append(writer, [
          drafts.user("u", "x"),
          {
            type: "user/message",
            surfaceOp: {
              op: "replace",
              startSeq: SessionSeq.make(0),
              endSeq: SessionSeq.make(0),
            },
            sourceEventSeqs: [],
            data: {
              id: "v",
              role: "user",
              content: [],
              source: { kind: "user" },
            },
          },
        ]).pipe(Effect.ensuring(store.close(writer)));
      }));
    thenFails(failureOf(exit), "EmptySourceList");
    assert.deepEqual(fs.readFileSync(file), before);
  });
  fs.rmSync(root, { recursive: true });
});

Deno.test("one writer per session", async (t) => {
  const root = await rootWithEmptySession("w");
  const file = fileOf(root, "w");
  await t.step(
    "a second writer in this process gets SessionLocked",
    async () => {
      const exit = await useStoreExit(root, (store) =>
        Effect.gen(function* () {
          const first = yield* store.open("w", { mode: "write" });
          const second = yield* Effect.result(
            store.open("w", { mode: "write" }),
          );
          yield* store.append(first, turnBatches(0)[0] ?? []);
          const reader = yield* store.open("w");
          yield* store.close(first);
          return { second, readerLines: reader.report.events + 1 };
        }));
      const { second, readerLines } = successOf(exit);
      assert.ok(Result.isFailure(second));
      thenFails(second.failure, "SessionLocked", { pid: Deno.pid });
      assert.equal(readerLines, 4);
    },
  );
  await t.step("a writer in another process gets SessionLocked", async () => {
    const exit = await useStoreExit(root, (store) =>
      Effect.gen(function* () {
        const first = yield* store.open("w", { mode: "write" });
        const child = spawnSync(Deno.execPath(), [
          "run",
          "-A",
          helper,
          root,
          "try",
          "w",
        ], { encoding: "utf8" });
        yield* store.close(first);
        return child.stdout.trim();
      }));
    assert.equal(successOf(exit), "SessionLocked");
  });
  await t.step(
    "while another process writes, this one is locked out and lines never interleave",
    async () => {
      const child = spawn(Deno.execPath(), [
        "run",
        "-A",
        helper,
        root,
        "hold",
        "w",
      ], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      const out: string[] = [];
      let buffer = "";
      const waitFor = (count: number) =>
        new Promise<void>((resolve) => {
          const check = () => {
            if (out.length >= count) resolve();
            else setTimeout(check, 10);
          };
          check();
        });
      child.stdout?.on("data", (data: Uint8Array) => {
        buffer += new TextDecoder().decode(data);
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        out.push(...lines);
      });
      await waitFor(1);
      assert.equal(out[0], "opened");
      for (let i = 0; i < 3; i++) {
        child.stdin?.write("append\n");
        const exit = await useStoreExit(
          root,
          (s) => s.open("w", { mode: "write" }),
        );
        thenFails(failureOf(exit), "SessionLocked");
        await waitFor(2 + i);
      }
      child.stdin?.end();
      await new Promise((resolve) => child.on("close", resolve));
      assert.deepEqual(out.slice(1), [
        "appended 3",
        "appended 4",
        "appended 5",
      ]);
      const read = await useStore(root, (s) => s.open("w", { mode: "write" }));
      assert.equal(read.session.surface.nextSeq, 6);
      assert.equal(read.report.tornTail, undefined);
      const lines = fs.readFileSync(file, "utf8").split("\n");
      assert.equal(lines.length, 8);
    },
  );
  await t.step("a lock left by a dead process is reclaimed", async () => {
    const dead = spawnSync(Deno.execPath(), ["eval", "console.log(Deno.pid)"], {
      encoding: "utf8",
    });
    const pid = Number(dead.stdout.trim());
    assert.ok(pid > 0);
    fs.writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid, start: null, token: "stale" }),
    );
    const stat = await useStore(root, (s) => s.stat("w"));
    assert.equal(stat.locked, false);
    const opened = await useStore(root, (store) =>
      Effect.gen(function* () {
        const writer = yield* store.open("w", { mode: "write" });
        const claims = claimsOf(file).map((name) =>
          JSON.parse(fs.readFileSync(path.join(root, name), "utf8"))
        );
        yield* store.close(writer);
        return claims;
      }));
    // The dead 0.2 lock is gone; the writer's own claim held its pid.
    assert.equal(opened.length, 1);
    assert.equal(opened[0].pid, Deno.pid);
    assert.deepEqual(claimsOf(file), []);
  });
  await t.step(
    "a lock whose pid now names a newer process is reclaimed where /proc is readable",
    async () => {
      let procReadable = true;
      try {
        fs.readFileSync(`/proc/${Deno.pid}/stat`);
      } catch {
        procReadable = false;
      }
      fs.writeFileSync(
        `${file}.lock`,
        JSON.stringify({ pid: Deno.pid, start: "1", token: "reused" }),
      );
      const exit = await useStoreExit(root, (store) =>
        Effect.gen(function* () {
          yield* store.close(yield* store.open("w", { mode: "write" }));
        }));
      if (procReadable) {
        // The lock is reclaimed: the open succeeds.
        successOf(exit);
      } else {
        // Without /proc the start time cannot be compared: stay conservative.
        thenFails(failureOf(exit), "SessionLocked");
        fs.rmSync(`${file}.lock`);
      }
    },
  );
  await t.step("a live lock from another process is respected", async () => {
    const child = spawn(Deno.execPath(), [
      "eval",
      "await new Promise((r) => setTimeout(r, 20000))",
    ]);
    fs.writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid: child.pid, start: null, token: "live" }),
    );
    const exit = await useStoreExit(
      root,
      (s) => s.open("w", { mode: "write" }),
    );
    const error = failureOf(exit);
    thenFails(error, "SessionLocked");
    thenFails(error, "SessionLocked", { pid: child.pid });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("close", resolve));
    fs.rmSync(`${file}.lock`);
  });
  fs.rmSync(root, { recursive: true });
});

Deno.test("torn tails and recovery through the store", async (t) => {
  const root = tempDir();
  const file = fileOf(root, "t");
  await useStore(root, (store) =>
    Effect.gen(function* () {
      const writer = yield* store.create(header("t"));
      yield* store.append(writer, turnBatches(0)[0] ?? []);
      yield* store.close(writer);
    }));
  const good = fs.readFileSync(file);
  fs.appendFileSync(file, '{"type":"assistant/mes');
  await t.step(
    "a reader reports the torn tail and leaves the file alone",
    async () => {
      const reader = await useStore(root, (s) => s.open("t"));
      assert.deepEqual(reader.report.tornTail, {
        offset: good.length,
        bytes: 22,
      });
      assert.equal(fs.statSync(file).size, good.length + 22);
    },
  );
  await t.step("a writer cuts the tail, then appends", async () => {
    const after = await useStore(root, (store) =>
      Effect.gen(function* () {
        const writer = yield* store.open("t", { mode: "write" });
        assert.equal(fs.statSync(file).size, good.length);
        yield* store.append(writer, [assistantCallDraft(0, 0, "c0")]);
        yield* store.close(writer);
        return yield* store.open("t");
      }));
    assert.equal(after.report.tornTail, undefined);
    assert.equal(after.session.surface.nextSeq, 4);
    assert.deepEqual(fs.readFileSync(file).subarray(0, good.length), good);
  });
  await t.step(
    "repair closes the turn and the transcript is clean",
    async () => {
      const before = await useStore(root, (s) => s.open("t"));
      assert.equal(
        checkTranscript(deriveMessages(before.session.surface)).length,
        1,
      );
      fs.copyFileSync(file, fileOf(root, "t2"));
      const repaired = await useStore(root, (store) =>
        Effect.gen(function* () {
          const results = [];
          for (const id of ["t", "t2"]) {
            const writer = yield* store.open(id, { mode: "write" });
            results.push(yield* store.repair(writer));
            results.push(yield* store.repair(writer));
            yield* store.close(writer);
          }
          return results;
        }));
      assert.deepEqual(
        repaired.map((r) => r.closers.length),
        [3, 0, 3, 0],
      );
      const text = fs.readFileSync(file, "utf8");
      assert.equal(text, fs.readFileSync(fileOf(root, "t2"), "utf8"));
      const reopened = await useStore(root, (s) => s.open("t"));
      assert.deepEqual(
        checkTranscript(deriveMessages(reopened.session.surface)),
        [],
      );
    },
  );
  await t.step(
    "mid-file corruption fails the open, for readers and writers",
    async () => {
      const lines = fs.readFileSync(file, "utf8").split("\n");
      lines[2] = lines[2]?.replace('"seq":1', '"seq":"1"') ?? "";
      fs.writeFileSync(file, lines.join("\n"));
      for (const mode of ["read", "write"] as const) {
        const exit = await useStoreExit(root, (s) => s.open("t", { mode }));
        const error = failureOf(exit);
        thenFails(error, "CorruptLine", {
          line: 3,
          innerTag: "InvalidSessionSeq",
        });
      }
      assert.deepEqual(claimsOf(file), []);
      const recovered = await useStore(
        root,
        (s) => s.open("t", { recover: true }),
      );
      assert.equal(recovered.session.surface.nextSeq, 1);
      assert.equal(recovered.report.stoppedAt?.line, 3);
    },
  );
  await t.step("a future version fails the open", async () => {
    fs.writeFileSync(
      fileOf(root, "future"),
      '{"type":"session","version":9,"id":"future","createdAt":0,"isSeeded":false}\n',
    );
    const exit = await useStoreExit(
      root,
      (s) => s.open("future", { mode: "write" }),
    );
    thenFails(failureOf(exit), "FormatTooNew");
  });
  await t.step("an empty file fails the open with MissingHeader", async () => {
    fs.writeFileSync(fileOf(root, "empty"), "");
    const exit = await useStoreExit(root, (s) => s.open("empty"));
    thenFails(failureOf(exit), "MissingHeader");
  });
  await t.step("a header-only file opens empty and takes appends", async () => {
    fs.writeFileSync(fileOf(root, "bare"), headerLine("bare"));
    const session = await useStore(root, (store) =>
      Effect.gen(function* () {
        const writer = yield* store.open("bare", { mode: "write" });
        assert.equal(writer.session.surface.nextSeq, 0);
        yield* store.append(writer, [toolCallDraft(0, 0, "x")]);
        yield* store.close(writer);
        return (yield* store.open("bare")).session;
      }));
    assert.equal(session.surface.nextSeq, 1);
  });
  await t.step(
    "a CRLF file opens for writing and keeps its lines",
    async () => {
      fs.writeFileSync(
        fileOf(root, "crlf"),
        headerLine("crlf").replace("\n", "\r\n") +
          '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}\r\n',
      );
      const reopened = await useStore(root, (store) =>
        Effect.gen(function* () {
          const writer = yield* store.open("crlf", { mode: "write" });
          assert.equal(writer.report.events, 1);
          yield* store.append(writer, [{
            type: "step/start",
            data: { turn: 0, step: 0 },
          }]);
          yield* store.close(writer);
          return yield* store.open("crlf");
        }));
      assert.equal(reopened.session.surface.nextSeq, 2);
      const read = await Effect.runPromise(
        readSessionFile(fileOf(root, "crlf")),
      );
      assert.equal(read.report.crlfLines, 2);
    },
  );
  fs.rmSync(root, { recursive: true });
});

Deno.test("a 50 MB single event round-trips", async () => {
  const root = tempDir();
  const big = "x".repeat(50 * 1024 * 1024);
  const read = await useStore(root, (store) =>
    Effect.gen(function* () {
      const writer = yield* store.create(header("big"));
      yield* store.append(writer, [
        drafts.user("u0", big),
        drafts.user("u1", "small"),
      ]);
      yield* store.close(writer);
      return yield* store.open("big");
    }));
  const [first, second] = deriveMessages(read.session.surface);
  const block = first?.content[0];
  assert.equal(block?.type === "text" && block.text.length, big.length);
  assert.equal(second?.id, "u1");
  assert.ok(fs.statSync(fileOf(root, "big")).size > 50 * 1024 * 1024);
  fs.rmSync(root, { recursive: true });
});

Deno.test("a failed write is truncated back", async (t) => {
  const root = tempDir();
  const file = fileOf(root, "f");
  const enospc = () => Object.assign(new Error("no space"), { code: "ENOSPC" });
  let failWrites = false;
  let failTruncate = false;
  const io: AppendIo = {
    write: (fd, bytes, offset, length, position) => {
      if (!failWrites) return fs.writeSync(fd, bytes, offset, length, position);
      // Half the batch reaches the file, then the disk is full.
      const half = Math.max(1, Math.floor(length / 2));
      fs.writeSync(fd, bytes, offset, half, position);
      throw enospc();
    },
    sync: (fd) => fs.fdatasyncSync(fd),
    truncate: (fd, length) => {
      if (failTruncate) throw enospc();
      fs.ftruncateSync(fd, length);
    },
  };
  const store = Effect.runSync(makeJsonlStoreWith({ root }, io));
  const scope = Effect.runSync(Scope.make());
  const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) =>
    Effect.runPromise(Effect.exit(Scope.provide(effect, scope)));
  const writer = successOf(await run(store.create(header("f"))));
  successOf(await run(store.append(writer, turnBatches(0)[0] ?? [])));
  const good = fs.readFileSync(file);
  let unknown: unknown;

  await t.step(
    "the batch fails, the file keeps its last good length",
    async () => {
      failWrites = true;
      const exit = await run(store.append(writer, turnBatches(0)[1] ?? []));
      const error = failureOf(exit);
      thenFails(error, "StorageError", { code: "ENOSPC" });
      assert.deepEqual(fs.readFileSync(file), good);
      assert.equal(writer.session.surface.nextSeq, 3);
    },
  );
  await t.step("the next append continues from the good length", async () => {
    failWrites = false;
    const { session } = successOf(
      await run(store.append(writer, turnBatches(0)[1] ?? [])),
    );
    assert.equal(session.surface.nextSeq, 4);
  });
  await t.step(
    "when even the truncate fails, the outcome is unknown and the handle closes",
    async () => {
      failWrites = true;
      failTruncate = true;
      const exit = await run(store.append(writer, turnBatches(0)[2] ?? []));
      const error = failureOf(exit);
      unknown = error;
      thenFails(error, "AppendOutcomeUnknown", {
        id: "f",
        fromSeq: 4,
        events: (turnBatches(0)[2] ?? []).length,
      });
      failWrites = false;
      failTruncate = false;
      const next = await run(store.append(writer, turnBatches(0)[2] ?? []));
      thenFails(failureOf(next), "HandleClosed");
      assert.deepEqual(claimsOf(file), []);
      // The partial batch is a torn tail or whole lines; a reader reports it.
      const reader = successOf(await run(store.open("f")));
      assert.equal(reader.session.surface.nextSeq, 4);
      assert.ok(reader.report.tornTail !== undefined);
    },
  );
  await t.step(
    "resolveAppend finds the batch absent, and a retry guided by it stores it once",
    async () => {
      assert.ok(unknown instanceof AppendOutcomeUnknown);
      const resolution = successOf(await run(store.resolveAppend(unknown)));
      assert.equal(resolution, "absent");
      const writer = successOf(await run(store.open("f", { mode: "write" })));
      successOf(await run(store.appendEvents(writer, unknown.batch)));
      const again = successOf(await run(store.resolveAppend(unknown)));
      assert.equal(again, "stored");
      const reader = successOf(await run(store.open("f")));
      assert.equal(
        reader.session.surface.nextSeq,
        4 + (turnBatches(0)[2] ?? []).length,
      );
    },
  );
  await Effect.runPromise(Scope.close(scope, Exit.void));
  fs.rmSync(root, { recursive: true });
});

Deno.test("a batch of partial answers alone is written without a sync; any other batch is synced", async () => {
  const root = tempDir();
  let syncs = 0;
  const io: AppendIo = {
    write: (fd, bytes, offset, length, position) =>
      fs.writeSync(fd, bytes, offset, length, position),
    sync: (fd) => {
      syncs++;
      fs.fdatasyncSync(fd);
    },
    truncate: (fd, length) => fs.ftruncateSync(fd, length),
  };
  const store = Effect.runSync(makeJsonlStoreWith({ root }, io));
  const partial = {
    type: "assistant/partial",
    ignorable: true,
    data: partialData(0, 0, [{ type: "text-delta", id: "t", delta: "Hi" }]),
  } as const;
  const synced = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
    const writer = yield* store.create(header("p"));
    const counts: number[] = [];
    const step = (drafts: ReadonlyArray<EventDraft>) =>
      Effect.map(store.append(writer, drafts), () => {
        counts.push(syncs);
        syncs = 0;
      });
    syncs = 0;
    yield* step(turnBatches(0)[0] ?? []);
    yield* step([partial]);
    yield* step([partial, partial]);
    yield* step([partial, { type: "step/end", data: { turn: 0, step: 0 } }]);
    yield* store.close(writer);
    return counts;
  })));
  assert.deepEqual(synced, [1, 0, 0, 1]);
  // A killed writer's unsynced batch is in the file all the same.
  const read = await Effect.runPromise(readSessionFile(fileOf(root, "p")));
  assert.equal(
    read.events.filter((e) => e.type === "assistant/partial").length,
    4,
  );
  fs.rmSync(root, { recursive: true });
});
