// The view from the installed package (`@palimpsest/session/view`) under
// Node: the HTML page of a session read back from a JSONL log.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Effect, Result } from "effect";
import { readSessionFile } from "@palimpsest/session/jsonl";
import {
  renderSessionHtml,
  writeSessionHtml,
  writeSessionHtmlFile,
} from "@palimpsest/session/view";
import { userMessage, writeJsonlSession } from "./_events.mjs";

test("renders the page of a session under Node", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-node-view-"));
  const events = [
    { type: "turn/start", data: { turn: 0 } },
    userMessage("u0", "a question <with markup>", { surfaceOp: "append" }),
  ];
  const log = await Effect.runPromise(readSessionFile(await writeJsonlSession(root, "viewed", events)));

  const html = Result.getOrThrow(renderSessionHtml(log.session, { title: "viewed" }));
  assert.match(html, /^<!doctype html>/i);
  assert.match(html, /<title>viewed · palimpsest<\/title>/);
  assert.ok(html.includes("a question &lt;with markup&gt;"));
  const chunks = [];
  assert.ok(Result.isSuccess(writeSessionHtml(log.session, (chunk) => chunks.push(chunk), { title: "viewed" })));
  assert.equal(chunks.join(""), html);

  const page = path.join(root, "viewed.html");
  const written = await Effect.runPromise(writeSessionHtmlFile(log.session, page, { title: "viewed" }));
  assert.equal(written.bytes, fs.statSync(page).size);
  const again = await Effect.runPromise(Effect.flip(writeSessionHtmlFile(log.session, page)));
  assert.equal(again._tag, "TargetExists");
});
