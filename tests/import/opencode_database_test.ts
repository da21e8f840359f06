/**
 * opencode's SQLite database (`opencode.db`), as the pinned opencode
 * (`tools/peer_tools/`) writes it: a session read from it imports to what
 * `opencode export` of the same session imports to. The fixture
 * (`tests/fixtures/import/opencode/read-tool.db`, with the export beside it)
 * needs no opencode; `tools/peer_tools/opencode_fixture.sh` writes it afresh
 * with the pinned opencode (`tests/_helpers/opencode_writer.ts`).
 */
import { deriveMessages } from "@palimpsest/session";
import {
  type ImportedSession,
  importSession,
  type ImportSessionNotChosen,
  sniffSessionFormat,
} from "@palimpsest/session/import";
import { Effect } from "effect";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { run, withDir } from "./_cli_run.ts";

const fixtures = new URL("../fixtures/import/opencode/", import.meta.url);
const db = new URL("read-tool.db", fixtures).pathname;
const exported = new URL("read-tool.export.json", fixtures).pathname;

const imported = (
  file: string,
  session?: string,
): Promise<ImportedSession> =>
  Effect.runPromise(
    importSession(file, {
      from: "opencode",
      ...(session === undefined ? {} : { session }),
    }),
  );

const refused = (
  file: string,
  session?: string,
): Promise<ImportSessionNotChosen> =>
  Effect.runPromise(
    Effect.flip(
      importSession(file, {
        from: "opencode",
        ...(session === undefined ? {} : { session }),
      }),
    ).pipe(
      Effect.flatMap((e) =>
        e._tag === "ImportSessionNotChosen" ? Effect.succeed(e) : Effect.die(
          new Error(
            `expected ImportSessionNotChosen, got ${e._tag}: ${e.message}`,
          ),
        )
      ),
    ),
  );

/** Both imports give the same messages and the same events. */
const assertSameImport = (a: ImportedSession, b: ImportedSession): void => {
  assert.deepEqual(
    deriveMessages(a.session.surface),
    deriveMessages(b.session.surface),
  );
  assert.deepEqual(a.events, b.events);
  assert.equal(a.session.header.id, b.session.header.id);
  assert.equal(a.report.lines, b.report.lines);
  assert.deepEqual(a.report.kinds, b.report.kinds);
};

Deno.test("a session read from opencode.db imports as its `opencode export` does", async () => {
  const fromDb = await imported(db);
  assertSameImport(fromDb, await imported(exported));
  // A user message, a tool call and its result, an assistant text.
  assert.deepEqual(
    deriveMessages(fromDb.session.surface).map((m) =>
      m.content.map((c) => `${m.role}/${c.type}`).join(",")
    ),
    ["user/text", "assistant/tool-call", "user/tool-result", "assistant/text"],
  );
  assert.equal(fromDb.report.formatVersion, "1.18.33");
  // Read-only: no journal is left beside the database.
  assert.deepEqual(
    fs.readdirSync(fixtures).filter((n) => n.includes(".db-")),
    [],
  );
});

Deno.test("opencode.db is told by its SQLite header, and its data folder points to it", async () => {
  assert.equal(sniffSessionFormat(db), "opencode");
  assert.equal(sniffSessionFormat(exported), "opencode");
  await withDir("opencode-data-", async (dir) => {
    fs.copyFileSync(db, path.join(dir, "opencode.db"));
    const refusal = await Effect.runPromise(
      Effect.flip(importSession(dir, { from: "opencode" })),
    );
    assert.equal(refusal._tag, "ImportNotThisFormat");
    assert.equal(
      "hint" in refusal ? refusal.hint : undefined,
      `import ${path.join(dir, "opencode.db")} with --from opencode`,
    );
  });
});

/** The fixture with a second, later session beside the first. */
const twoSessions = (dir: string): { file: string; ids: string[] } => {
  const file = path.join(dir, "opencode.db");
  fs.copyFileSync(db, file);
  const d = new DatabaseSync(file);
  try {
    d.exec(
      "INSERT INTO session SELECT 'ses_second' AS id, project_id, workspace_id, parent_id, slug, directory, path, title, version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission, agent, model, time_created + 1, time_updated, time_compacting, time_archived FROM session",
    );
    const ids = d.prepare("SELECT id FROM session ORDER BY time_created")
      .all().map((r) => String(r.id));
    return { file, ids };
  } finally {
    d.close();
  }
};

Deno.test("a database holding several sessions imports the one asked for, and lists them when none or an unknown one is", async () => {
  await withDir("opencode-db-", async (dir) => {
    const { file, ids } = twoSessions(dir);
    const [first = "", second = ""] = ids;
    assert.equal(second, "ses_second");
    const none = await refused(file);
    assert.deepEqual([none.requested, none.sessions], [undefined, ids]);
    assert.match(none.message, /ses_second/);
    const unknown = await refused(file, "ses_nope");
    assert.deepEqual([unknown.requested, unknown.sessions], ["ses_nope", ids]);
    assertSameImport(await imported(file, first), await imported(exported));
    // The command line: --session picks it, and a refusal names the ids.
    const out = path.join(dir, "out.jsonl");
    const importDb = (...more: string[]) =>
      run("import", "--from", "opencode", file, "--out", out, ...more);
    const ambiguous = await importDb();
    assert.equal(ambiguous.code, 1);
    assert.match(ambiguous.err, /ImportSessionNotChosen/);
    assert.ok(ambiguous.err.includes(first) && ambiguous.err.includes(second));
    assert.equal(fs.existsSync(out), false);
    const chosen = await importDb("--session", first);
    assert.equal(chosen.code, 0, chosen.err);
    assert.match(fs.readFileSync(out, "utf8"), new RegExp(first));
  });
});

Deno.test("a database with no session is refused, saying so", async () => {
  await withDir("opencode-db-", async (dir) => {
    const file = path.join(dir, "opencode.db");
    fs.copyFileSync(db, file);
    const d = new DatabaseSync(file);
    d.exec("DELETE FROM part; DELETE FROM message; DELETE FROM session");
    d.close();
    const empty = await refused(file);
    assert.deepEqual(empty.sessions, []);
    assert.match(empty.message, /holds none/);
  });
});
