import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Effect, Result } from "effect";
import {
  compact,
  Draft,
  makeJsonlStore,
  Session,
  SessionSeq,
} from "@palimpsest/session";
import { encodeEventLine, encodeHeaderLine } from "@palimpsest/session/jsonl";
import { recordingIo, runCli } from "@palimpsest/session/cli";
import { claimsOf } from "../_helpers/store.ts";
import {
  cliInProcess as run,
  fixture,
  json,
  root,
  tempCopy,
  tempDir,
} from "./_cli.ts";
import { user } from "../_helpers/build.ts";

const commands = [
  "verify",
  "derive",
  "stats",
  "explain",
  "migrate",
  "copy",
  "view",
  "repair",
  "schema",
];

Deno.test("runCli() usage and help", async (t) => {
  await t.step("every command has --help, exit 0", async () => {
    for (const name of commands) {
      const r = await run(name, "--help");
      assert.equal(r.code, 0, name);
      assert.match(r.stdout, new RegExp(`USAGE\\n  palimpsest ${name} `));
    }
    assert.equal((await run("help", "verify")).code, 0);
    assert.equal((await run("help", "frob")).code, 2);
  });

  await t.step("the top-level help lists every command", async () => {
    const r = await run("--help");
    assert.equal(r.code, 0);
    for (const name of commands) assert.match(r.stdout, new RegExp(name));
  });

  await t.step(
    "usage errors exit 2 with a UsageError under --json",
    async () => {
      for (
        const argv of [
          ["frob", "--json"],
          ["verify", "--json"],
          ["verify", "a", "b", "--json"],
          ["derive", "a", "--frob", "--json"],
          ["explain", fixture("valid.jsonl"), "--json"],
          ["migrate", fixture("v1.jsonl"), "--json"],
          ["migrate", fixture("v1.jsonl"), "--out", "--json"],
        ]
      ) {
        const r = await run(...argv);
        assert.equal(r.code, 2, argv.join(" "));
        assert.equal(json(r).error.tag, "UsageError", argv.join(" "));
      }
    },
  );

  await t.step("no arguments prints help on stderr, exit 2", async () => {
    const r = await run();
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.notEqual(r.stderr, "");
  });
});

Deno.test("verify", async (t) => {
  await t.step("an empty file has no header, exit 1", async () => {
    const file = path.join(tempDir(), "empty.jsonl");
    fs.writeFileSync(file, "");
    const r = await run("verify", file, "--json");
    assert.equal(r.code, 1);
    assert.equal(json(r).error.tag, "MissingHeader");
  });

  await t.step(
    "a refused migration names the old file's line, exit 1",
    async () => {
      const r = await run(
        "verify",
        path.join(root, "tests", "fixtures", "v1", "consumed-chunk.jsonl"),
        "--json",
      );
      assert.equal(r.code, 1);
      const report = json(r);
      assert.equal(report.version, 1);
      assert.deepEqual(
        [report.error.tag, report.error.line, report.error.seq],
        ["ConsumedChunkReference", 10, 8],
      );
    },
  );

  await t.step("a torn tail is a warning on stderr in text mode", async () => {
    const r = await run("verify", fixture("torn-tail.jsonl"));
    assert.equal(r.code, 0);
    assert.notEqual(r.stderr, "");
  });

  await t.step(
    "the JSON document has exactly the documented keys",
    async () => {
      const keys = (r: { stdout: string }) => Object.keys(JSON.parse(r.stdout));
      const always = [
        "ok",
        "version",
        "events",
        "surface",
        "replacements",
        "rewinds",
      ];
      assert.deepEqual(
        keys(await run("verify", fixture("valid.jsonl"), "--json")),
        always,
      );
      assert.deepEqual(
        keys(await run("verify", fixture("torn-tail.jsonl"), "--json")),
        // The torn write cut the turn short: it is open too.
        [...always, "tornTail", "open"],
      );
      const bad = await run("verify", fixture("fold-error.jsonl"), "--json");
      assert.deepEqual(keys(bad), [...always, "error"]);
      assert.deepEqual(Object.keys(json(bad).error), [
        "tag",
        "line",
        "seq",
        "message",
      ]);
    },
  );

  await t.step("progress is drawn only when stderr is a terminal", async () => {
    const file = path.join(tempDir(), "big.jsonl");
    const header =
      '{"type":"session","version":3,"id":"big","createdAt":0,"isSeeded":false}\n';
    const event = JSON.stringify(
      user(0, { text: "x".repeat(5 * 1024 * 1024), time: 0 }),
    );
    fs.writeFileSync(file, `${header}${event}\n`);
    const terminal = recordingIo(true);
    assert.equal(await runCli(["verify", file, "--json"], terminal), 0);
    assert.notEqual(terminal.err(), "");
    const piped = recordingIo(false);
    assert.equal(await runCli(["verify", file, "--json"], piped), 0);
    assert.equal(piped.err(), "");
    assert.deepEqual(JSON.parse(terminal.out()), JSON.parse(piped.out()));
  });
});

/** `repair FILE --json` refuses with exit 1 and `tag`, and leaves FILE as it was. */
const assertRepairRefused = async (file: string, tag: string) => {
  const before = fs.readFileSync(file);
  const r = await run("repair", file, "--json");
  assert.equal(r.code, 1);
  assert.equal(json(r).error.tag, tag);
  assert.deepEqual(fs.readFileSync(file), before);
};

Deno.test("derive", async (t) => {
  await t.step("text mode prints one line per message", async () => {
    const r = await run("derive", fixture("valid.jsonl"));
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim().split("\n").length, 5);
  });

  await t.step("reads a v1 log", async () => {
    const r = await run("derive", fixture("v1.jsonl"), "--json");
    assert.equal(r.code, 0);
    assert.equal(json(r).length, 3);
  });
});

Deno.test("stats", async (t) => {
  await t.step("measures compactions and system prompt changes", async () => {
    const r = await run("stats", fixture("v1.jsonl"), "--json");
    assert.equal(r.code, 0);
    const stats = json(r);
    assert.equal(stats.version, 1);
    assert.equal(stats.replacements, 2);
    assert.equal(stats.compactions.count, 1);
    assert.deepEqual(stats.compactions.items[0].shadowed, [5, 8, 10]);
    assert.equal(
      stats.compactions.charsSaved,
      Number(stats.compactions.items[0].charsBefore) -
        Number(stats.compactions.items[0].charsAfter),
    );
    assert.equal(stats.systemPromptChanges.count, 1);
    assert.equal(stats.prunes.count, 0);
  });

  await t.step(
    "prints a replacement's nodes as one run, and plurals right",
    async () => {
      const r = await run("stats", fixture("v1.jsonl"));
      assert.equal(r.code, 0);
      assert.match(r.stdout, /^1 compaction, 3 nodes shadowed, /m);
      assert.match(r.stdout, /^ {2}seq 20 replaced 5\.\.10 \(3 nodes\): /m);
      assert.match(r.stdout, /^0 prunes$/m);
      assert.match(r.stdout, /^1 system prompt change, 1 node shadowed, /m);
    },
  );

  await t.step(
    "counts a stored compaction over an unanswered call",
    async () => {
      const r = await run(
        "stats",
        path.join(fixture(".."), "stored", "shadowed-unanswered-call.jsonl"),
        "--json",
      );
      assert.equal(r.code, 0);
      const stats = json(r);
      assert.equal(stats.compactions.count, 1);
      assert.deepEqual(stats.compactions.items[0].shadowed, [0, 1]);
    },
  );

  await t.step("refuses an invalid log with exit 1", async () => {
    const r = await run("stats", fixture("fold-error.jsonl"), "--json");
    assert.equal(r.code, 1);
    assert.equal(json(r).error.tag, "NonContiguousSeq");
  });
});

Deno.test("explain", async (t) => {
  await t.step(
    "a compaction's lineage reaches the original events",
    async () => {
      const r = await run("explain", fixture("v1.jsonl"), "20", "--json");
      assert.equal(r.code, 0);
      const report = json(r);
      assert.equal(report.onSurface, true);
      assert.deepEqual(report.shadowedBy, []);
      assert.deepEqual(
        report.lineage[0].sources,
        [18, 19, 5, 8, 10],
      );
    },
  );

  await t.step("a log-only event is not a surface event", async () => {
    const r = await run("explain", fixture("valid.jsonl"), "0", "--json");
    assert.equal(r.code, 0);
    assert.equal(json(r).surfaceEvent, false);
    assert.equal(json(r).type, "turn/start");
  });

  await t.step("a seq outside the log or not a number exits 2", async () => {
    for (const seq of ["12", "x", "1.5"]) {
      const r = await run("explain", fixture("valid.jsonl"), seq, "--json");
      assert.equal(r.code, 2, seq);
      assert.equal(json(r).error.tag, "UsageError");
    }
  });
});

Deno.test("repair", async (t) => {
  await t.step("is idempotent", async () => {
    const file = tempCopy("torn-tail.jsonl", "crash.jsonl");
    assert.equal((await run("repair", file)).code, 0);
    const once = fs.readFileSync(file);
    const again = await run("repair", file, "--json");
    assert.equal(again.code, 0);
    assert.deepEqual(json(again).closers, []);
    assert.deepEqual(fs.readFileSync(file), once);
  });

  await t.step(
    "a file name that is not a store id gives the same bytes",
    async () => {
      const viaStore = tempCopy("torn-tail.jsonl", "crash.jsonl");
      const viaFile = tempCopy("torn-tail.jsonl", "Crash.v3.jsonl");
      assert.equal((await run("repair", viaStore)).code, 0);
      assert.equal((await run("repair", viaFile)).code, 0);
      assert.deepEqual(fs.readFileSync(viaFile), fs.readFileSync(viaStore));
      assert.deepEqual(claimsOf(viaFile), []);
    },
  );

  await t.step("a session held by a writer is refused, exit 2", async () => {
    const file = tempCopy("torn-tail.jsonl", "held.jsonl");
    const before = fs.readFileSync(file);
    const store = Effect.runSync(makeJsonlStore({ root: path.dirname(file) }));
    const r = await Effect.runPromise(
      store.withSession(
        "held",
        () => Effect.promise(() => run("repair", file, "--json")),
      ),
    );
    assert.equal(r.code, 2);
    assert.equal(json(r).error.tag, "SessionLocked");
    // Opening for write cut the torn tail; the CLI added nothing.
    assert.equal(fs.readFileSync(file).length < before.length, true);
    const after = await run("verify", file, "--json");
    assert.equal(json(after).events, 6);
  });

  await t.step("an older log is refused, exit 1, and left alone", async () => {
    const file = tempCopy("v1.jsonl");
    await assertRepairRefused(file, "FormatTooOld");
  });

  await t.step(
    "an older log under a name that is not a store id is refused too",
    async () => {
      const file = tempCopy("v1.jsonl", "Old.v1.jsonl");
      await assertRepairRefused(file, "FormatTooOld");
      assert.deepEqual(claimsOf(file), []);
    },
  );

  await t.step("a missing file exits 2 and creates nothing", async () => {
    const dir = path.join(tempDir(), "nowhere");
    const r = await run("repair", path.join(dir, "s.jsonl"), "--json");
    assert.equal(r.code, 2);
    assert.equal(fs.existsSync(dir), false);
  });

  await t.step("an invalid log is refused, exit 1", async () => {
    const file = tempCopy("corrupt-line.jsonl");
    await assertRepairRefused(file, "InvalidJson");
  });
});

Deno.test("migrate", async (t) => {
  await t.step("a refused log exits 1 and creates no target", async () => {
    const out = path.join(tempDir(), "new.jsonl");
    const r = await run(
      "migrate",
      path.join(
        path.dirname(fixture("v1.jsonl")),
        "..",
        "v1",
        "consumed-chunk.jsonl",
      ),
      "--out",
      out,
      "--json",
    );
    assert.equal(r.code, 1);
    assert.equal(typeof json(r).error.line, "number");
    assert.equal(fs.existsSync(out), false);
  });

  await t.step("a future version exits 1", async () => {
    const out = path.join(tempDir(), "new.jsonl");
    const r = await run(
      "migrate",
      fixture("future.jsonl"),
      "--out",
      out,
      "--json",
    );
    assert.equal(r.code, 1);
    assert.equal(json(r).error.tag, "FormatTooNew");
  });
});

Deno.test("explain handles a lineage thousands of levels deep", async () => {
  const depth = 2000;
  const program = Effect.gen(function* () {
    let session = Session.make({ id: "deep", createdAt: 0, isSeeded: false });
    let summary: number | undefined;
    for (let i = 0; i < depth; i++) {
      session = yield* Session.append(
        session,
        Draft.user(`message ${i}`, { id: `u${i}` }),
      );
      const added = Session.nextSeq(session) - 1;
      session = yield* compact(session, {
        startSeq: SessionSeq.make(summary ?? added),
        endSeq: SessionSeq.make(added),
        summary: `summary ${i}`,
        compactionId: `c${i}`,
      });
      summary = Session.nextSeq(session) - 2;
    }
    return session;
  });
  const session = Effect.runSync(program);
  const file = path.join(tempDir(), "deep.jsonl");
  fs.writeFileSync(
    file,
    encodeHeaderLine(session.header) +
      Result.getOrThrow(Session.events(session)).map((e) => encodeEventLine(e))
        .join(""),
  );
  const first = await run("explain", file, "0", "--json");
  assert.equal(first.code, 0);
  assert.equal(json(first).shadowedBy.length, depth);
  const last = Session.nextSeq(session) - 2;
  const text = await run("explain", file, String(last));
  assert.equal(text.code, 0);
  assert.ok(text.stdout.split("\n").length < 100);
  const deep = await run("explain", file, String(last), "--json");
  assert.equal(deep.code, 0);
  assert.equal(json(deep).onSurface, true);
});

Deno.test("a postgres:// address without a session is refused, exit 2", async (t) => {
  await t.step("as the log to read", async () => {
    const r = await run("verify", "postgres://u@db.invalid/app", "--json");
    assert.equal(r.code, 2);
    assert.equal(json(r).error.tag, "InvalidAddress");
  });

  await t.step("as the target of a copy", async () => {
    const r = await run(
      "copy",
      fixture("valid.jsonl"),
      "postgres://u@db.invalid/app?session=",
      "--json",
    );
    assert.equal(r.code, 2);
    assert.equal(json(r).error.tag, "InvalidAddress");
  });
});

Deno.test("copy", async (t) => {
  await t.step("to a folder, the session keeps its id, exit 0", async () => {
    const dir = tempDir();
    const r = await run("copy", fixture("valid.jsonl"), dir, "--json");
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(fs.readdirSync(dir), ["fixture.jsonl"]);
  });

  await t.step(
    "to a file that is not a session file name, exit 2",
    async () => {
      const target = path.join(tempDir(), "copy.txt");
      const r = await run("copy", fixture("valid.jsonl"), target, "--json");
      assert.equal(r.code, 2);
      assert.equal(json(r).error.tag, "CopyTargetName");
      assert.equal(fs.existsSync(target), false);
    },
  );

  await t.step(
    "a log longer than holdLogUpTo gets its own checkpoint as the copy closes, a short one none",
    async () => {
      const long = (n: number) => {
        const source = path.join(tempDir(), "long.jsonl");
        const header = { id: "long", createdAt: 0, isSeeded: false };
        const session = Effect.runSync(Session.appendAll(
          Session.make(header),
          Array.from({ length: n }, (_, i) => Draft.user(`m${i}`)),
        ));
        fs.writeFileSync(
          source,
          encodeHeaderLine(header) +
            Result.getOrThrow(Session.events(session)).map((e) =>
              encodeEventLine(e)
            ).join(""),
        );
        return source;
      };
      for (
        const [n, files] of [
          [10_050, ["long.jsonl", "long.jsonl.checkpoint"]],
          [50, ["long.jsonl"]],
        ] as const
      ) {
        const dir = tempDir();
        const r = await run("copy", long(n), dir, "--json");
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(fs.readdirSync(dir).sort(), files);
      }
    },
  );

  await t.step("onto an existing session, exit 2", async () => {
    const dir = tempDir();
    assert.equal((await run("copy", fixture("valid.jsonl"), dir)).code, 0);
    const r = await run("copy", fixture("valid.jsonl"), dir, "--json");
    assert.equal(r.code, 2);
    assert.equal(json(r).error.tag, "SessionAlreadyExists");
  });
});
