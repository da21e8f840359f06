// Every entry point of the installed package under Node: the exports map
// names each with its types and its module, each loads, and each has a test
// in this folder that uses it.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Effect } from "effect";
import { decodeEvent, eventJsonSchema } from "@palimpsest/session/schema";

const require = createRequire(import.meta.url);
const manifestPath = require.resolve("@palimpsest/session/package.json");
const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
const entryPoints = Object.keys(manifest.exports).filter((e) => e !== "./package.json");
const specifierOf = (entry) => entry === "." ? manifest.name : `${manifest.name}/${entry.slice(2)}`;

test("the package is @palimpsest/session with the palimpsest bin", () => {
  assert.equal(manifest.name, "@palimpsest/session");
  assert.equal(manifest.type, "module");
  assert.equal(manifest.bin.palimpsest, "./dist/cli/bin.js");
  assert.ok(manifest.dependencies.effect);
});

test("every entry point has types and a module that loads", async () => {
  assert.ok(entryPoints.length >= 9, entryPoints.join(", "));
  const dir = path.dirname(manifestPath);
  for (const entry of entryPoints) {
    const target = manifest.exports[entry];
    assert.ok(fs.existsSync(path.join(dir, target.types)), `${entry}: ${target.types}`);
    assert.ok(fs.existsSync(path.join(dir, target.default)), `${entry}: ${target.default}`);
    const module = await import(specifierOf(entry));
    assert.ok(Object.keys(module).length > 0, `${entry} exports nothing`);
  }
});

test("every entry point is used by a test in this folder", () => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const sources = fs.readdirSync(here)
    .filter((f) => f.endsWith(".test.mjs"))
    .map((f) => fs.readFileSync(path.join(here, f), "utf8"))
    .join("\n");
  const untested = entryPoints.filter((entry) => !sources.includes(`from "${specifierOf(entry)}"`));
  assert.deepEqual(untested, []);
});

test("the JSON Schema of an event line comes from @palimpsest/session/schema", async () => {
  const schema = eventJsonSchema();
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  const types = schema.oneOf.map((branch) => branch.properties.type.const);
  assert.ok(types.includes("turn/start"), types.join(", "));
  const event = await Effect.runPromise(
    decodeEvent({ type: "turn/start", seq: 0, time: 0, data: { turn: 0 } }),
  );
  assert.equal(event.type, "turn/start");
});
