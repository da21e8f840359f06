// The types of the installed package under Node: a TypeScript program
// importing from every entry point by the package's name compiles with tsc
// (module NodeNext, strict), so each `types` condition of the exports map
// resolves to declarations that carry the API. PALIMPSEST_TSC names tsc
// (node/smoke.sh sets it to the build's).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const program = `
import { Effect, Result } from "effect";
import { Session, SessionSeq, type SessionEvent } from "@palimpsest/session";
import { migrateFile } from "@palimpsest/session/migrations";
import { readSessionFile } from "@palimpsest/session/jsonl";
import { eventJsonSchema } from "@palimpsest/session/schema";
import { recordingIo, runCli } from "@palimpsest/session/cli";
import { runTurn } from "@palimpsest/session/ai";
import { toOpenAIChat } from "@palimpsest/session/providers";
import { importSession } from "@palimpsest/session/import";
import { renderSessionHtml } from "@palimpsest/session/view";
import { parseSessionAddress } from "@palimpsest/session/postgres";

const session: Session = Session.make({ id: "s", createdAt: 0, isSeeded: false });
const next: SessionSeq = Session.nextSeq(session);
const html: string = Result.getOrThrow(renderSessionHtml(session));
const schema: string = eventJsonSchema().$schema;
const code: Promise<number> = runCli(["--help"], recordingIo());
const read = readSessionFile("x.jsonl").pipe(Effect.map((log) => log.events.length));
const migrated = migrateFile("x.jsonl").pipe(Effect.map((s) => s.fromVersion));
const imported = importSession("x.jsonl", { from: "pi" });
const address = parseSessionAddress("postgres://db/app?session=s");
const chat = toOpenAIChat([]).messages;
type Turn = typeof runTurn;
const events: ReadonlyArray<SessionEvent> = [];
// @ts-expect-error a session id is a string
Session.make({ id: 1, createdAt: 0, isSeeded: false });
export { address, chat, code, events, html, imported, migrated, next, read, schema };
export type { Turn };
`;

test("a TypeScript program imports every entry point with its types", () => {
  const tsc = process.env.PALIMPSEST_TSC;
  assert.ok(tsc, "PALIMPSEST_TSC must name tsc (node/smoke.sh sets it)");
  const dir = fs.mkdtempSync(path.join(process.cwd(), ".types-"));
  try {
    fs.writeFileSync(path.join(dir, "consumer.ts"), program);
    fs.writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
          lib: ["ES2023"],
        },
        files: ["consumer.ts"],
      }),
    );
    const run = spawnSync(tsc, ["-p", dir], { encoding: "utf8" });
    assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
