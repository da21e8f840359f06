// Every entry point of the installed package under Node: the exports map
// names each with its types and its module, each loads, and each has a test
// in this folder that uses it. The package declares Node 20; the entry points
// whose modules import a dependency that declares a newer Node (the AI SDK's
// packages declare Node 22) are exactly the ones the docs name, and load here
// only on a Node that new (node/smoke.sh runs this file on Node 20 and 22).
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
});

test("effect is the program's own: a peer dependency to the next major, one copy", () => {
  assert.match(manifest.peerDependencies.effect, /^\^4\.\d+\.\d+$/);
  assert.equal(manifest.dependencies?.effect, undefined);
  assert.equal(manifest.peerDependenciesMeta?.effect, undefined);
  // The package loads the program's effect, not a copy of its own.
  const dir = path.dirname(manifestPath);
  assert.equal(fs.existsSync(path.join(dir, "node_modules", "effect")), false);
  const program = require.resolve("effect");
  const fromPackage = createRequire(manifestPath).resolve("effect");
  assert.equal(fromPackage, program);
});

// The entry points the docs (docs/node.md, docs/api) say need Node 22.
const NEEDS_NODE_22 = ["./ai-sdk"];
const nodeMajor = Number(process.versions.node.split(".")[0]);
const minimumMajor = (range) => Number(/^>=\s*(\d+)/.exec(range ?? "")?.[1] ?? 0);
// A dependency's manifest, read from node_modules (nested under the package,
// or beside it), not through its exports map.
const manifestOf = (name) => {
  const dir = path.dirname(manifestPath);
  const places = [path.join(dir, "node_modules", name), path.join(dir, "..", "..", name)];
  const found = places.find((place) => fs.existsSync(path.join(place, "package.json")));
  assert.ok(found !== undefined, `${name} is installed`);
  return JSON.parse(fs.readFileSync(path.join(found, "package.json"), "utf8"));
};

// The bare specifiers (as package names) the module `file` imports, statically
// or by a literal dynamic import, through the package's own relative imports.
const packagesReachedFrom = (file) => {
  const seen = new Set();
  const packages = new Set();
  const stack = [file];
  while (stack.length > 0) {
    const at = stack.pop();
    if (seen.has(at)) continue;
    seen.add(at);
    const code = fs.readFileSync(at, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
    const specifiers = [
      ...code.matchAll(
        /(?:^|[;\n])\s*(?:import|export)\s+(?:\*(?:\s+as\s+[\w$]+)?|\{[^}]*\}|[\w$]+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+[\w$]+))?)\s*from\s*"([^"]+)"/g,
      ),
      ...code.matchAll(/(?:^|[;\n])\s*import\s*"([^"]+)"/g),
      ...code.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
    ].map((m) => m[1]);
    for (const specifier of specifiers) {
      if (specifier.startsWith(".")) stack.push(path.resolve(path.dirname(at), specifier));
      else if (!specifier.startsWith("node:")) {
        const parts = specifier.split("/");
        packages.add(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]);
      }
    }
  }
  return packages;
};

test("the package declares Node 20, and only the entry points the docs name need Node 22", () => {
  assert.equal(manifest.engines.node, ">=20");
  const dir = path.dirname(manifestPath);
  const needs = entryPoints.filter((entry) => {
    const reached = packagesReachedFrom(path.join(dir, manifest.exports[entry].default));
    return [...reached].some((name) => {
      return minimumMajor(manifestOf(name).engines?.node) > 20;
    });
  });
  assert.deepEqual(needs, NEEDS_NODE_22);
  // The AI SDK packages are why: they declare Node 22.
  assert.equal(minimumMajor(manifestOf("@ai-sdk/provider").engines.node), 22);
});

test("every entry point has types and a module that loads", async () => {
  assert.ok(entryPoints.length >= 9, entryPoints.join(", "));
  const dir = path.dirname(manifestPath);
  for (const entry of entryPoints) {
    // Loaded by the Node 22 run of this file (node/smoke.sh).
    if (NEEDS_NODE_22.includes(entry) && nodeMajor < 22) continue;
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
