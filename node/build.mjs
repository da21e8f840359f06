// Builds the npm package of @palimpsest/session in node/package/ from the
// Deno sources, in the shape JSR's npm compatibility layer gives a package:
// ES modules and .d.ts files, an `exports` map with `types` and `default`
// for every entry point of deno.json, and the npm dependencies at the
// versions deno.json pins, but effect, a peer dependency from its pin to the
// next major. The CLI is the `palimpsest` bin.
//
// Steps: copy mod.ts, src/, migrations/ and cli/ into build/src; put the
// Node entry of the CLI (src/cli_main.ts) in place of cli/main.ts, whose
// process streams are Deno's, and add the bin (src/cli_bin.ts) and the
// declaration of a `Deno` that may be absent (src/deno_global.d.ts); rewrite the
// imports of the package by its own name (`@palimpsest/session/ai`, which
// deno.json's import map resolves) into relative imports; compile with tsc;
// write package.json, README.md and LICENSE next to dist/.
//
// Run after `npm ci` in node/ (tsc and the dependencies' types come from
// there): `node build.mjs`.
import * as fs from "node:fs";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const build = path.join(here, "build");
const sources = path.join(build, "src");
const out = path.join(here, "package");

const denoJson = JSON.parse(fs.readFileSync(path.join(root, "deno.json"), "utf8"));
const SELF = denoJson.name;

const fail = (message) => {
  console.error(`node build: ${message}`);
  process.exit(1);
};

// -- copy -------------------------------------------------------------------
fs.rmSync(build, { recursive: true, force: true });
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(sources, { recursive: true });
fs.copyFileSync(path.join(root, "mod.ts"), path.join(sources, "mod.ts"));
for (const dir of ["src", "migrations", "cli"]) {
  fs.cpSync(path.join(root, dir), path.join(sources, dir), { recursive: true });
}

// The Node entry of the CLI must export what the Deno one exports.
const exportedNames = (file) => {
  const text = fs.readFileSync(file, "utf8");
  const names = new Set();
  for (const m of text.matchAll(/^export\s+(?:async\s+)?(?:function|const|class|interface|type)\s+(\w+)/gm)) {
    names.add(m[1]);
  }
  for (const m of text.matchAll(/^export\s*\{([^}]*)\}/gm)) {
    for (const item of m[1].split(",")) {
      const name = item.trim().replace(/^type\s+/, "").split(/\s+as\s+/).pop();
      if (name) names.add(name);
    }
  }
  return [...names].sort();
};
const denoCli = exportedNames(path.join(root, "cli/main.ts"));
const nodeCli = exportedNames(path.join(here, "src/cli_main.ts"));
if (JSON.stringify(denoCli) !== JSON.stringify(nodeCli)) {
  fail(`node/src/cli_main.ts exports ${nodeCli.join(", ")}; cli/main.ts exports ${denoCli.join(", ")}`);
}
fs.copyFileSync(path.join(here, "src/cli_main.ts"), path.join(sources, "cli/main.ts"));
fs.copyFileSync(path.join(here, "src/cli_bin.ts"), path.join(sources, "cli/bin.ts"));
fs.copyFileSync(path.join(here, "src/deno_global.d.ts"), path.join(sources, "deno_global.d.ts"));

// -- rewrite self-imports ---------------------------------------------------
// deno.json's import map names every entry point under the package's name.
const selfTargets = new Map(
  Object.entries(denoJson.imports)
    .filter(([spec]) => spec === SELF || spec.startsWith(`${SELF}/`))
    .map(([spec, target]) => [spec, path.join(sources, target)]),
);
// The files under dir whose names end with one of the extensions.
const walk = (dir, extensions = [".ts"]) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return walk(full, extensions);
    return extensions.some((ext) => entry.name.endsWith(ext)) ? [full] : [];
  });
// A static import or export (`from "x"`, a bare `import "x"`) or a dynamic
// `import("x")` on a line of code; doc comments keep their examples.
const specifier = /(\bfrom\s*|\bimport\s*\(\s*|^\s*import\s*)"([^"]+)"/g;
let rewritten = 0;
for (const file of walk(sources)) {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  let changed = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*(\*|\/\/|\/\*)/.test(line)) continue;
    lines[i] = line.replace(specifier, (whole, lead, spec) => {
      const target = selfTargets.get(spec);
      if (target === undefined) {
        if (spec === SELF || spec.startsWith(`${SELF}/`)) {
          fail(`${path.relative(sources, file)} imports ${spec}, which deno.json's imports do not map`);
        }
        return whole;
      }
      let relative = path.relative(path.dirname(file), target).split(path.sep).join("/");
      if (!relative.startsWith(".")) relative = `./${relative}`;
      changed = true;
      rewritten++;
      return `${lead}"${relative}"`;
    });
  }
  if (changed) fs.writeFileSync(file, lines.join("\n"));
}

// -- the npm packages the sources import -----------------------------------
// Each at the version deno.json pins, installed in build/ (where tsc looks
// for them from build/src), so that deno.json stays the one list of pins.
const npmPins = new Map(
  Object.entries(denoJson.imports)
    .filter(([, target]) => target.startsWith("npm:"))
    .map(([name, target]) => [name, target.slice("npm:".length).slice(name.length + 1)]),
);
// The packages a set of modules imports (a static, dynamic or type import).
const packagesImportedBy = (files) => {
  const names = new Set();
  for (const file of files) {
    for (const line of fs.readFileSync(file, "utf8").split("\n")) {
      if (/^\s*(\*|\/\/|\/\*)/.test(line)) continue;
      for (const m of line.matchAll(specifier)) {
        const spec = m[2];
        if (spec.startsWith(".") || spec.startsWith("node:")) continue;
        // Words in a message ("from \"${seq}\"") are not module names.
        if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/[\w./-]*)?$/.test(spec)) continue;
        names.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]);
      }
    }
  }
  return [...names].sort();
};
const pinned = (names) =>
  Object.fromEntries(names.map((name) => {
    const version = npmPins.get(name);
    if (version === undefined) fail(`the sources import ${name}, which deno.json does not pin`);
    return [name, version];
  }));
fs.writeFileSync(
  path.join(build, "package.json"),
  JSON.stringify({ private: true, type: "module", dependencies: pinned(packagesImportedBy(walk(sources))) }),
);
execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"], {
  cwd: build,
  stdio: "inherit",
});

// -- compile ----------------------------------------------------------------
execFileSync(path.join(here, "node_modules/.bin/tsc"), ["-p", path.join(here, "tsconfig.json")], {
  stdio: "inherit",
});
fs.chmodSync(path.join(out, "dist/cli/bin.js"), 0o755);

// -- package.json -----------------------------------------------------------
const distOf = (target) => `./dist/${target.replace(/^\.\//, "").replace(/\.ts$/, "")}`;
const exportsMap = {};
for (const [entry, target] of Object.entries(denoJson.exports)) {
  const base = distOf(target);
  for (const ext of [".js", ".d.ts"]) {
    if (!fs.existsSync(path.join(out, base + ext))) fail(`entry point ${entry}: ${base}${ext} was not built`);
  }
  exportsMap[entry] = { types: `${base}.d.ts`, default: `${base}.js` };
}
exportsMap["./package.json"] = "./package.json";

// A package the built JavaScript imports is a dependency; one only the
// declarations import (types of a provider SDK) is an optional peer
// dependency: a program that uses those types installs it.
const built = walk(path.join(out, "dist"), [".js", ".d.ts"]);
const runtime = packagesImportedBy(built.filter((f) => f.endsWith(".js")));
const typesOnly = packagesImportedBy(built.filter((f) => f.endsWith(".d.ts")))
  .filter((name) => !runtime.includes(name));
// effect is the user's own: the package's values (Effects, Exits, Schemas,
// errors) mix with the program's, so there must be one copy of effect, the
// program's. It is a peer dependency from the version deno.json pins up to
// the next major (node/smoke.sh runs the tests on that version and on the
// newest release the range admits).
const SHARED = "effect";
if (!runtime.includes(SHARED)) fail(`the built JavaScript does not import ${SHARED}`);
const sharedPin = pinned([SHARED])[SHARED];
if (!/^\d+\.\d+\.\d+$/.test(sharedPin)) fail(`deno.json pins ${SHARED} at ${sharedPin}, not an exact version`);
const dependencies = pinned(runtime.filter((name) => name !== SHARED));
const peers = {
  peerDependencies: { [SHARED]: `^${sharedPin}`, ...pinned(typesOnly) },
  ...(typesOnly.length === 0 ? {} : {
    peerDependenciesMeta: Object.fromEntries(typesOnly.map((name) => [name, { optional: true }])),
  }),
};

const manifest = {
  name: SELF,
  version: denoJson.version,
  description:
    "The append-only session log of an LLM agent and the surface derived from it: format, stores (JSONL, PostgreSQL), turn loop, importers, view and CLI.",
  license: denoJson.license,
  type: "module",
  exports: exportsMap,
  bin: { palimpsest: "./dist/cli/bin.js" },
  files: ["dist/", "README.md", "LICENSE"],
  engines: { node: ">=20" },
  dependencies,
  ...peers,
};
fs.writeFileSync(path.join(out, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
fs.copyFileSync(path.join(root, "README.md"), path.join(out, "README.md"));
fs.copyFileSync(path.join(root, "LICENSE"), path.join(out, "LICENSE"));

const modules = walk(path.join(out, "dist"), [".js"]).length;
console.log(
  `node build: ${SELF}@${denoJson.version} in node/package: ${modules} modules, ` +
    `${Object.keys(denoJson.exports).length} entry points, ${rewritten} self-imports made relative, ` +
    `dependencies ${Object.entries(dependencies).map(([n, v]) => `${n}@${v}`).join(", ")}, ` +
    `peer ${SHARED}@${peers.peerDependencies[SHARED]}` +
    (typesOnly.length === 0 ? "" : `, optional peers (types) ${typesOnly.join(", ")}`),
);
