import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Effect, type Exit, Result, Stream } from "effect";
import {
  type EventDraft,
  type FollowError,
  makeJsonlStore,
  type SessionEvent,
  type SessionStore,
} from "@palimpsest/session";
import {
  DEFAULT_MAX_LINE_BYTES,
  encodeEventLine,
  encodeHeaderLine,
  repairFile,
} from "@palimpsest/session/jsonl";
import { makeLineFollower } from "../../src/log/follow.ts";
import { makeFileFollower } from "../../src/jsonl/follow_file.ts";
import { decoded, turnBatches, user } from "../_helpers/build.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";
import { denoOk } from "../_helpers/deno_run.ts";
import { spawnDenoWriter } from "@palimpsest/session/testing";

const encoder = new TextEncoder();
const repo = new URL("../../", import.meta.url).pathname;
const writerScript = new URL("../store/jsonl_writer.ts", import.meta.url)
  .pathname;
const tornWriter = new URL("../_helpers/torn_writer.ts", import.meta.url)
  .pathname;

Deno.test("a follower reports a bad line as the reader does: its number, its start, the rule", () => {
  // Given a log whose second line is not JSON and longer than an excerpt.
  const follower = makeLineFollower(0, undefined, 1024);
  const bad = `{${"x".repeat(80)}`;
  const header = encodeHeaderLine({ id: "s", createdAt: 0, isSeeded: false });
  // When a follower is pushed the log, then it stops at line 2.
  const pushed = follower.push(encoder.encode(`${header}${bad}\n`));
  assert.ok(Result.isFailure(pushed));
  thenFails(pushed.failure, "CorruptLine", {
    line: 2,
    excerpt: `${bad.slice(0, 60)}...`,
    innerTag: "InvalidJson",
  });
});

/** A store over a fresh folder, polling every 5 ms. */
const freshStore = (): { root: string; store: SessionStore } => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "follow-"));
  const store = Effect.runSync(
    makeJsonlStore({ root, pollInterval: "5 millis" }),
  );
  return { root, store };
};

/** Stores the batches of `turns` as session `id`. */
const seed = (
  store: SessionStore,
  id: string,
  turns: ReadonlyArray<ReadonlyArray<ReadonlyArray<EventDraft>>>,
): Promise<void> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function* () {
    const writer = yield* store.create({ id, createdAt: 1, isSeeded: false });
    for (const turn of turns) {
      for (const batch of turn) yield* store.append(writer, batch);
    }
  })));

/** A follow running in the background, collecting what it serves. */
interface Running {
  readonly served: SessionEvent[];
  readonly exit: () => Exit.Exit<void, FollowError> | undefined;
  readonly stop: () => Promise<void>;
}

const startFollow = (
  store: SessionStore,
  id: string,
): Running => {
  const served: SessionEvent[] = [];
  const controller = new AbortController();
  let exit: Exit.Exit<void, FollowError> | undefined;
  const done = Effect.runPromiseExit(
    Stream.runForEach(store.follow(id), (event) =>
      Effect.sync(() => {
        served.push(event);
      })),
    { signal: controller.signal },
  ).then((e) => {
    exit = e;
  });
  return {
    served,
    exit: () => exit,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
};

/** Waits until `ready` holds or the follow ends; false after 10 s. */
const waitUntil = async (
  running: Running,
  ready: () => boolean,
): Promise<boolean> => {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (ready()) return true;
    if (running.exit() !== undefined) return ready();
    await new Promise((r) => setTimeout(r, 5));
  }
  return ready();
};

/** The complete event lines of a file, read on their own: no follower. */
const fileEventLines = (file: string): string[] => {
  const text = fs.readFileSync(file, "utf8");
  const complete = text.slice(0, text.lastIndexOf("\n") + 1);
  return complete.split("\n").slice(1, -1).map((line) => `${line}\n`);
};

/** A session `s` in a fresh store, with a follower started on it. */
interface Followed {
  readonly root: string;
  readonly file: string;
  readonly running: Running;
}

/**
 * Seeds session `s` with `turns` in a fresh store, lets `prepare` change its
 * file, starts a follower, runs `body`, then stops the follower and removes
 * the store.
 */
const withFollower = async (
  turns: ReadonlyArray<ReadonlyArray<ReadonlyArray<EventDraft>>>,
  body: (followed: Followed) => Promise<void>,
  prepare: (file: string) => void = () => {},
): Promise<void> => {
  const { root, store } = freshStore();
  const file = path.join(root, "s.jsonl");
  await seed(store, "s", turns);
  prepare(file);
  const running = startFollow(store, "s");
  try {
    await body({ root, file, running });
  } finally {
    await running.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
};

/** Waits until the follower has served `count` events; fails after 10 s. */
const servesAtLeast = async (
  running: Running,
  count: number,
): Promise<void> => {
  assert.ok(
    await waitUntil(running, () => running.served.length >= count),
    `the follower served ${running.served.length} of ${count} events`,
  );
};

/** The follower served exactly `lines`, in order. */
const assertServed = (running: Running, lines: ReadonlyArray<string>): void =>
  assert.deepEqual(
    running.served.map((event) => encodeEventLine(event)),
    lines,
  );

/** Waits for the follower to stop and checks it stopped with ETRUNCATED. */
const stopsTruncated = async (running: Running): Promise<void> => {
  await waitUntil(running, () => running.exit() !== undefined);
  const exit = running.exit();
  assert.ok(exit !== undefined, "the follower stopped");
  thenFails(failureOf(exit), "StorageError", {
    operation: "follow",
    code: "ETRUNCATED",
  });
};

/**
 * Case 8: a session whose file ends in a torn line that a follower has
 * read; `cutAndWrite` then cuts the tail and writes new lines. The
 * follower must serve exactly the file's events, never the held bytes
 * glued to the new ones.
 */
const tornTailCutWhileFollowing = async (
  openTurn: boolean,
  cutAndWrite: (root: string, file: string) => Promise<void>,
): Promise<void> => {
  const batches = openTurn
    ? [turnBatches(0).slice(0, 2)]
    : [turnBatches(0), turnBatches(1)];
  let stored = 0;
  await withFollower(batches, async ({ root, file, running }) => {
    // The first poll reads to the end of the file, the torn line included.
    await servesAtLeast(running, stored);
    await cutAndWrite(root, file);
    const lines = fileEventLines(file);
    assert.ok(lines.length > stored, "the cut wrote new lines");
    await waitUntil(running, () => running.served.length >= lines.length);
    assert.equal(running.exit(), undefined, "the follower is still running");
    // Let it poll a few more times: nothing more may come.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(running.exit(), undefined, "the follower is still running");
    assertServed(running, lines);
  }, (file) => {
    stored = fileEventLines(file).length;
    // The torn line: the start of a line of the next seq, cut inside its
    // time (a writer killed mid-write leaves such a tail).
    fs.appendFileSync(
      file,
      `{"type":"turn/start","seq":${stored},"time":17000`,
    );
  });
};

Deno.test("a follower serves the file's lines when repair in another process cuts a torn tail it has read", async () => {
  await tornTailCutWhileFollowing(true, async (_root, file) => {
    await denoOk([
      "run",
      "-A",
      path.join(repo, "cli", "main.ts"),
      "repair",
      file,
    ], {
      cwd: repo,
    });
  });
});

Deno.test("a follower serves the file's lines when repairFile cuts a torn tail it has read", async () => {
  await tornTailCutWhileFollowing(true, async (_root, file) => {
    const done = await Effect.runPromise(repairFile(file));
    assert.ok(done.cutTornTail !== undefined && done.closers.length > 0);
  });
});

Deno.test("a follower serves the file's lines when a writer in another process resumes the session", async () => {
  await tornTailCutWhileFollowing(false, async (root) => {
    // Opening for write cuts the torn tail; each append then writes a
    // `turn/start` at the offset where the torn line began.
    const writer = spawnDenoWriter(writerScript, [root], ["hold", "s"]);
    try {
      assert.equal(await writer.line(), "opened");
      for (let i = 0; i < 2; i++) {
        await writer.send("append");
        assert.match(await writer.line() ?? "", /^appended \d+$/);
      }
    } finally {
      await writer.end();
      await writer.status;
    }
  });
});

Deno.test("a follower serves the file's lines when a writer in this process resumes the session", async () => {
  await tornTailCutWhileFollowing(false, async (root) => {
    const store = Effect.runSync(makeJsonlStore({ root }));
    await Effect.runPromise(
      store.withSession("s", (writer) =>
        store.append(writer, [
          { type: "turn/start", data: { turn: 2 } },
          { type: "step/start", data: { turn: 2, step: 0 } },
        ])),
    );
  });
});

Deno.test("a follower whose served lines were rewritten fails ETRUNCATED rather than guess", async () => {
  // Given a follower that served a whole session.
  await withFollower([turnBatches(0)], async ({ file, running }) => {
    const lines = fileEventLines(file);
    await servesAtLeast(running, lines.length);
    // When its last line is rewritten with other bytes and the file grows
    // (a failed batch cut back, then another written in its place).
    const text = fs.readFileSync(file, "utf8");
    const last = lines[lines.length - 1] ?? "";
    const changed = last.replace(/"time":\d/, '"time":9');
    assert.notEqual(changed, last);
    fs.writeFileSync(
      file,
      text.slice(0, text.length - last.length) + changed +
        encodeEventLine({
          type: "turn/start",
          seq: lines.length,
          time: 0,
          data: { turn: 1 },
        } as unknown as SessionEvent),
    );
    // Then it stops with ETRUNCATED and serves nothing of the new bytes.
    await stopsTruncated(running);
    assert.equal(running.served.length, lines.length);
  });
});

Deno.test("a follower whose file got shorter than what it served fails ETRUNCATED", async () => {
  await withFollower([turnBatches(0)], async ({ file, running }) => {
    const lines = fileEventLines(file);
    await servesAtLeast(running, lines.length);
    const size = fs.statSync(file).size;
    fs.truncateSync(file, size - (lines[lines.length - 1] ?? "").length);
    await stopsTruncated(running);
  });
});

Deno.test("a follower serves a line written in two parts once its end is written", async () => {
  await withFollower([turnBatches(0)], async ({ file, running }) => {
    const stored = fileEventLines(file).length;
    await servesAtLeast(running, stored);
    const line = encodeEventLine({
      type: "turn/start",
      seq: stored,
      time: 7,
      data: { turn: 1 },
    } as unknown as SessionEvent);
    fs.appendFileSync(file, line.slice(0, 20));
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(running.served.length, stored, "half a line is not served");
    fs.appendFileSync(file, line.slice(20));
    await servesAtLeast(running, stored + 1);
    assertServed(running, fileEventLines(file));
  });
});

Deno.test("a follower serves the file's lines while writers in another process keep leaving and cutting torn tails", async () => {
  // Given a session and a follower polling every 5 ms.
  const cycles = 40;
  await withFollower([turnBatches(0)], async ({ root, file, running }) => {
    // When another process, 40 times, leaves a torn line, then reopens the
    // session (cutting it) and appends 1 to 3 events where it was.
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", tornWriter, root, "s", String(cycles), "7"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    assert.equal(new TextDecoder().decode(run.stdout).trim(), `done ${cycles}`);
    // Then the follower serves exactly the file's lines, and keeps going.
    const lines = fileEventLines(file);
    await waitUntil(running, () => running.served.length >= lines.length);
    assert.equal(running.exit(), undefined, "the follower is still running");
    assertServed(running, lines);
  });
});

Deno.test("a follower reads again a window of the file that was cut and rewritten while it read it", () => {
  // Given a file whose torn last line spans two reads (longer than 64 KiB).
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "follow-"));
  const file = path.join(root, "s.jsonl");
  const header = encodeHeaderLine({ id: "s", createdAt: 0, isSeeded: false });
  const start = encodeEventLine(
    decoded({ type: "turn/start", seq: 0, time: 0, data: { turn: 0 } }),
  );
  const message = (text: string) => encodeEventLine(decoded(user(1, { text })));
  const torn = message("a".repeat(100_000)).slice(0, -10);
  // Shorter than the torn line: its end falls inside what was to be read.
  const written = message("b".repeat(99_980));
  fs.writeFileSync(file, header + start + torn);
  const cut = encoder.encode(header + start).length;
  // When the file is cut at the torn line and a new line written there
  // right after the follower's first read call (as a writer that opens the
  // session does).
  let reads = 0;
  const readAt = (
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ) => {
    const n = fs.readSync(fd, buffer, offset, length, position);
    reads += 1;
    if (reads === 1) {
      fs.truncateSync(file, cut);
      fs.appendFileSync(file, written);
    }
    return n;
  };
  const follower = makeLineFollower(0, undefined, DEFAULT_MAX_LINE_BYTES);
  const files = makeFileFollower(
    file,
    follower,
    DEFAULT_MAX_LINE_BYTES,
    readAt,
  );
  try {
    // Then what it serves over two looks is the file's lines, never the
    // start of the torn line glued to the end of the new one.
    const served: SessionEvent[] = [];
    for (let look = 0; look < 2; look++) {
      const looked = files.look();
      assert.ok(Result.isSuccess(looked), String(Result.isFailure(looked)));
      served.push(...looked.success);
    }
    assert.ok(reads > 2, "the first read was followed by others");
    assert.deepEqual(served.map((event) => encodeEventLine(event)), [
      start,
      written,
    ]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
