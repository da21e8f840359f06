/**
 * The Claude Agent SDK `SessionStore` over the session store: the SDK's
 * behavioural contracts (what its published conformance suite checks, in
 * our own tests), on the memory and the JSONL layers; and the incremental
 * import, which must derive what importing the same transcript derives.
 */
import {
  deriveMessages,
  layerJsonlStore,
  layerMemoryStore,
  SessionStore,
} from "@palimpsest/session";
import {
  type ClaudeSessionStore,
  openClaudeSessionStore,
} from "@palimpsest/session/claude-agent";
import { importSession } from "@palimpsest/session/import";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { postgresTest } from "../_helpers/postgres.ts";
import type {
  SessionKey,
  SessionStore as SdkSessionStore,
  SessionStoreEntry,
} from "@anthropic-ai/claude-agent-sdk";
import { Effect, type Layer } from "effect";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const KEY: SessionKey = { projectKey: "proj", sessionId: "sess" };
const sub = (subpath: string): SessionKey => ({ ...KEY, subpath });
const entry = (
  type: string,
  extra: Record<string, unknown> = {},
): SessionStoreEntry => ({ type, ...extra });

const layers: Record<string, () => Layer.Layer<SessionStore, unknown>> = {
  memory: () => layerMemoryStore(),
  jsonl: () => layerJsonlStore({ root: Deno.makeTempDirSync() }),
};

/** A fresh store on a fresh layer, closed after `f`. */
const withStore = async (
  layer: () => Layer.Layer<SessionStore, unknown>,
  f: (store: ClaudeSessionStore) => Promise<void>,
): Promise<void> => {
  const store = await openClaudeSessionStore(layer());
  // Type-checked against the SDK's own interface.
  const sdk: SdkSessionStore = store;
  void sdk;
  try {
    await f(store);
  } finally {
    await store.close();
  }
};

for (const name of ["memory", "jsonl", "postgres"]) {
  const contract = (
    title: string,
    f: (s: ClaudeSessionStore) => Promise<void>,
  ) => {
    const full = `claude-agent (${name}): ${title}`;
    const layer = layers[name];
    if (layer !== undefined) Deno.test(full, () => withStore(layer, f));
    else {
      postgresTest(
        full,
        (url) => withStore(() => layerPostgresStore({ url }), f),
      );
    }
  };

  contract(
    "append then load gives the entries back, equal and in order",
    async (s) => {
      const entries = [
        entry("a", { n: 1, nested: { x: [1, 2], y: null } }),
        entry("b", { n: 2, uuid: "u-b", timestamp: "2026-01-01T00:00:00Z" }),
      ];
      await s.append(KEY, entries);
      assert.deepEqual(await s.load(KEY), entries);
    },
  );

  contract("a key never written loads null, main or subkey", async (s) => {
    assert.equal(await s.load(KEY), null);
    assert.equal(await s.load(sub("subagents/a")), null);
  });

  contract("appends keep their call order", async (s) => {
    await s.append(KEY, [entry("a")]);
    await s.append(KEY, [entry("b"), entry("c")]);
    await s.append(KEY, [entry("d")]);
    assert.deepEqual(
      await s.load(KEY),
      ["a", "b", "c", "d"].map((t) => entry(t)),
    );
  });

  contract("an empty append stores nothing", async (s) => {
    await s.append(KEY, []);
    assert.equal(await s.load(KEY), null);
    await s.append(KEY, [entry("a")]);
    await s.append(KEY, []);
    assert.deepEqual(await s.load(KEY), [entry("a")]);
  });

  contract("a subkey is stored apart from its main transcript", async (s) => {
    await s.append(KEY, [entry("main")]);
    await s.append(sub("subagents/x"), [entry("sub")]);
    assert.deepEqual(await s.load(KEY), [entry("main")]);
    assert.deepEqual(await s.load(sub("subagents/x")), [entry("sub")]);
  });

  contract("project keys are apart", async (s) => {
    const a = { projectKey: "A", sessionId: "s" };
    const b = { projectKey: "B", sessionId: "s" };
    await s.append(a, [entry("a")]);
    await s.append(b, [entry("b")]);
    assert.deepEqual(await s.load(a), [entry("a")]);
    assert.deepEqual(await s.load(b), [entry("b")]);
  });

  contract(
    "listSessions gives a project's sessions with epoch-ms times",
    async (s) => {
      await s.append({ projectKey: "P", sessionId: "s1" }, [entry("a")]);
      await s.append({ projectKey: "P", sessionId: "s2" }, [entry("b")]);
      await s.append({ projectKey: "Q", sessionId: "s3" }, [entry("c")]);
      const listed = await s.listSessions("P");
      assert.deepEqual(listed.map((x) => x.sessionId).sort(), ["s1", "s2"]);
      assert.ok(
        listed.every((x) => Number.isInteger(x.mtime) && x.mtime > 1e12),
      );
      assert.deepEqual(await s.listSessions("never-seen"), []);
    },
  );

  contract("listSessions leaves subagent transcripts out", async (s) => {
    await s.append(
      { projectKey: "P", sessionId: "s1", subpath: "subagents/x" },
      [
        entry("sub"),
      ],
    );
    assert.deepEqual(await s.listSessions("P"), []);
  });

  contract(
    "delete makes a key load null; deleting an unknown key is fine",
    async (s) => {
      await s.append(KEY, [entry("a")]);
      await s.delete(KEY);
      assert.equal(await s.load(KEY), null);
      await s.delete({ projectKey: "x", sessionId: "never" });
    },
  );

  contract(
    "deleting a main transcript deletes its subkeys, and nothing else",
    async (s) => {
      await s.append(KEY, [entry("main")]);
      await s.append(sub("subagents/a"), [entry("sa")]);
      await s.append(sub("subagents/b"), [entry("sb")]);
      await s.append({ projectKey: "proj", sessionId: "other" }, [entry("o")]);
      await s.append({ projectKey: "proj2", sessionId: "sess" }, [entry("p2")]);
      await s.delete(KEY);
      assert.equal(await s.load(KEY), null);
      assert.equal(await s.load(sub("subagents/a")), null);
      assert.equal(await s.load(sub("subagents/b")), null);
      assert.deepEqual(
        await s.load({ projectKey: "proj", sessionId: "other" }),
        [
          entry("o"),
        ],
      );
      assert.deepEqual(
        await s.load({ projectKey: "proj2", sessionId: "sess" }),
        [
          entry("p2"),
        ],
      );
      assert.deepEqual(await s.listSubkeys(KEY), []);
    },
  );

  contract("deleting a subkey deletes only it", async (s) => {
    await s.append(KEY, [entry("main")]);
    await s.append(sub("subagents/a"), [entry("sa")]);
    await s.append(sub("subagents/b"), [entry("sb")]);
    await s.delete(sub("subagents/a"));
    assert.deepEqual(await s.load(KEY), [entry("main")]);
    assert.equal(await s.load(sub("subagents/a")), null);
    assert.deepEqual(await s.load(sub("subagents/b")), [entry("sb")]);
  });

  contract("listSubkeys gives a session's subpaths", async (s) => {
    await s.append(sub("subagents/a"), [entry("sa")]);
    await s.append(sub("subagents/b"), [entry("sb")]);
    await s.append({
      projectKey: "proj",
      sessionId: "other",
      subpath: "subagents/c",
    }, [
      entry("sc"),
    ]);
    assert.deepEqual((await s.listSubkeys(KEY)).sort(), [
      "subagents/a",
      "subagents/b",
    ]);
  });

  contract("listSubkeys leaves the main transcript out", async (s) => {
    await s.append(KEY, [entry("main")]);
    assert.deepEqual(await s.listSubkeys(KEY), []);
    assert.deepEqual(
      await s.listSubkeys({ projectKey: "x", sessionId: "never" }),
      [],
    );
  });

  contract("an entry whose uuid is stored already is kept once", async (s) => {
    const first = entry("user", { uuid: "u1" });
    const untagged = entry("custom-title", { title: "t" });
    await s.append(KEY, [first, untagged]);
    // A retried batch: the entry with a uuid is not kept twice, one without is.
    await s.append(KEY, [first, untagged]);
    assert.deepEqual(await s.load(KEY), [first, untagged, untagged]);
  });

  contract(
    "a key appended to after its delete starts afresh, the old log kept",
    async (s) => {
      await s.append(KEY, [entry("old")]);
      await s.delete(KEY);
      await s.append(KEY, [entry("new")]);
      assert.deepEqual(await s.load(KEY), [entry("new")]);
      assert.deepEqual((await s.listSessions("proj")).map((x) => x.sessionId), [
        "sess",
      ]);
    },
  );
}

const FIXTURES = fileURLToPath(
  new URL("../fixtures/import/claude-code/", import.meta.url),
);

/** The entries of a transcript file. */
const linesOf = (file: string): SessionStoreEntry[] =>
  Deno.readTextFileSync(file).split("\n").filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));

/** The messages the session of a key derives, read from the store at `root`. */
const mirrored = (root: string) =>
  Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      const store = yield* SessionStore;
      const [id] = yield* store.list();
      const handle = yield* store.open(id ?? "");
      return deriveMessages(handle.session.surface);
    })).pipe(Effect.provide(layerJsonlStore({ root }))),
  );

for (const fixture of ["compact", "rewind", "split-interrupted"]) {
  Deno.test(`claude-agent: a mirrored ${fixture} transcript derives what its import derives, across two store handles`, async () => {
    const file = `${FIXTURES}${fixture}.jsonl`;
    const entries = linesOf(file);
    const root = Deno.makeTempDirSync();
    const half = Math.floor(entries.length / 2);
    // Line by line, as the SDK's eager mirror sends them, the second half
    // by another store handle (a new process would do the same).
    for (const part of [entries.slice(0, half), entries.slice(half)]) {
      const store = await openClaudeSessionStore(layerJsonlStore({ root }));
      for (const e of part) await store.append(KEY, [e]);
      await store.close();
    }
    const imported = await Effect.runPromise(
      importSession(file, { from: "claude-code" }),
    );
    assert.deepEqual(
      await mirrored(root),
      deriveMessages(imported.session.surface),
    );
    const store = await openClaudeSessionStore(layerJsonlStore({ root }));
    assert.deepEqual(await store.load(KEY), entries);
    await store.close();
  });
}

Deno.test("claude-agent: a session's header holds the cwd and version its first batch names, as an import's does", async () => {
  const root = Deno.makeTempDirSync();
  const store = await openClaudeSessionStore(layerJsonlStore({ root }));
  await store.append(KEY, [
    entry("queue-operation"),
    entry("user", {
      cwd: "/w",
      version: "2.1.0",
      message: { role: "user", content: "hi" },
    }),
  ]);
  await store.close();
  const header = await Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      const sessions = yield* SessionStore;
      const [id = ""] = yield* sessions.list();
      return (yield* sessions.open(id)).session.header;
    })).pipe(Effect.provide(layerJsonlStore({ root }))),
  );
  assert.deepEqual(header.meta?.["importedFrom"], {
    tool: "claude-code",
    ...KEY,
    cwd: "/w",
    version: "2.1.0",
  });
});

Deno.test("claude-agent: one writer per session across store handles", async () => {
  const root = Deno.makeTempDirSync();
  const first = await openClaudeSessionStore(layerJsonlStore({ root }));
  const second = await openClaudeSessionStore(layerJsonlStore({ root }));
  try {
    await first.append(KEY, [entry("a")]);
    await assert.rejects(
      second.append(KEY, [entry("b")]),
      (e: unknown) =>
        e instanceof Error && Reflect.get(e, "_tag") === "SessionLocked",
    );
    // A reader is no writer: loading through the second handle works.
    assert.deepEqual(await second.load(KEY), [entry("a")]);
  } finally {
    await first.close();
    await second.close();
  }
});
