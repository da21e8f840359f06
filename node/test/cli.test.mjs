// The CLI from the installed package under Node: in-process through
// `@palimpsest/session/cli`, and as the `palimpsest` bin through npx in the
// project that installed the package.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { processIo, recordingIo, runCli } from "@palimpsest/session/cli";
import { userMessage, writeJsonlSession } from "./_events.mjs";

// A JSONL session of one finished turn; returns its path.
const writeSession = (id) =>
  writeJsonlSession(fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-node-cli-")), id, [
    { type: "turn/start", data: { turn: 0 } },
    userMessage("u0", "hi", { surfaceOp: "append" }),
    { type: "turn/end", data: { turn: 0, reason: { kind: "completed" } } },
  ]);

// `npx palimpsest ARGS` in the project this test runs in (`--no`: never a
// download; `--`: the arguments are the bin's, not npx's).
const npx = (...args) =>
  spawnSync("npx", ["--no", "--", "palimpsest", ...args], { encoding: "utf8" });

test("runs the CLI in-process under Node", async () => {
  const file = await writeSession("in-process");
  const io = recordingIo();
  assert.equal(await runCli(["verify", file, "--json"], io), 0);
  const report = JSON.parse(io.out());
  assert.equal(report.ok, true);
  assert.equal(report.version, 3);
  assert.equal(report.events, 3);
  assert.equal(typeof processIo().stdout, "function");
});

test("npx palimpsest verify checks a log and exits 0, or 1 when it is broken", async () => {
  const file = await writeSession("bin");
  const ok = npx("verify", file);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /valid: 3 events, surface 1 nodes?/);

  // A complete line that is not an event: the log is invalid (exit 1).
  fs.appendFileSync(file, '{"type":"no/such-event","seq":3,"time":0,"data":{}}\n');
  const broken = npx("verify", file, "--json");
  assert.equal(broken.status, 1, broken.stderr);
  const report = JSON.parse(broken.stdout);
  assert.equal(report.ok, false);
  assert.equal(report.error.line, 5);
});

test("npx palimpsest view writes the page of a log (the view loaded by the bin)", async () => {
  const file = await writeSession("page");
  const page = path.join(path.dirname(file), "page.html");
  const run = npx("view", file, "--out", page);
  assert.equal(run.status, 0, run.stderr);
  assert.match(fs.readFileSync(page, "utf8"), /<title>page · palimpsest<\/title>/);
});

test("npx palimpsest --version prints the package's version", () => {
  const run = npx("--version");
  assert.equal(run.status, 0, run.stderr);
  const manifest = JSON.parse(
    fs.readFileSync(path.join("node_modules", "@palimpsest", "session", "package.json"), "utf8"),
  );
  assert.equal(run.stdout.trim(), `palimpsest v${manifest.version}`);
});
