/**
 * Fuzzing the format check of the importers: files made of real lines of
 * one tool (from `../shared/peer-logs/`, the opencode export as one line,
 * and the sessions the pinned tools wrote for the importers' fixtures),
 * shuffled, among junk (lines that are not JSON, JSON of no known format,
 * blank lines) and sometimes cut in the middle of their last line. For each
 * file, with at least one of the tool's lines among its first ten:
 *
 * - the file sniffs as that tool's;
 * - every other importer refuses it with `ImportNotThisFormat` naming the
 *   tool, strictly and under `recover`;
 * - the tool's own importer never refuses it as another format.
 *
 * And every line of every real file is told as its tool's, never another's.
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  importSession,
  sessionFormatOf,
  sniffSessionFormat,
  type SourceTool,
  sourceTools,
} from "@palimpsest/session/import";
import { peerLogs, walk } from "../import/_peer_logs.ts";
import {
  countsReport,
  fuzzAsync,
  heavyRuns,
  type Rng,
} from "../_helpers/fuzz.ts";

const toolOf = (rel: string): SourceTool | undefined =>
  rel.split("/").find((part): part is SourceTool =>
    sourceTools.some((t) => t === part)
  );

/** The real lines of each tool (the opencode export compacted to one). */
const pool = (): ReadonlyMap<SourceTool, ReadonlyArray<string>> => {
  const base = peerLogs();
  const lines = new Map<SourceTool, string[]>();
  for (const rel of walk(base)) {
    const tool = toolOf(rel);
    if (tool === undefined || rel.startsWith("expected/")) continue;
    const text = fs.readFileSync(path.join(base, rel), "utf8");
    const own = lines.get(tool) ?? [];
    if (rel.endsWith(".json")) own.push(JSON.stringify(JSON.parse(text)));
    else {
      own.push(
        ...text.split("\n").filter((l) => {
          if (l.trim() === "") return false;
          try {
            JSON.parse(l);
            return true;
          } catch {
            return false;
          }
        }),
      );
    }
    lines.set(tool, own);
  }
  // The sessions the pinned tools wrote for the importers' fixtures
  // (`real*.jsonl`): real lines too, and the only ones of a tool the shared
  // files lack (Gemini CLI).
  const fixtures = new URL("../fixtures/import/", import.meta.url).pathname;
  for (const tool of sourceTools) {
    const dir = path.join(fixtures, tool);
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir)) {
      if (!/^real.*\.jsonl$/.test(name)) continue;
      const text = fs.readFileSync(path.join(dir, name), "utf8");
      const own = lines.get(tool) ?? [];
      own.push(...text.split("\n").filter((l) => l.trim() !== ""));
      lines.set(tool, own);
    }
  }
  return lines;
};

const junk = (rng: Rng): string =>
  rng.pick([
    () => "",
    () => "not json at all",
    () => '{"type":"user"}{"type":"user"}',
    () => JSON.stringify({ hello: rng.int(0, 9) }),
    () => JSON.stringify({ type: "note", n: rng.int(0, 9) }),
    () => JSON.stringify([rng.int(0, 9)]),
    () => String(rng.int(0, 99)),
  ])();

/** A file of the tool's lines among junk; one of its lines is in the first ten. */
const genFile = (rng: Rng, own: ReadonlyArray<string>): string => {
  const lines: string[] = [];
  for (let n = rng.int(1, 12); n > 0; n--) lines.push(rng.pick(own));
  for (let n = rng.int(0, 8); n > 0; n--) {
    lines.splice(rng.int(0, lines.length), 0, junk(rng));
  }
  const first = rng.int(0, Math.min(9, lines.length));
  lines.splice(first, 0, rng.pick(own));
  let text = lines.join("\n");
  if (rng.chance(0.3)) {
    // Cut in the middle of the last line: a torn write.
    const last = text.lastIndexOf("\n") + 1;
    text = text.slice(0, last + Math.floor((text.length - last) / 2));
  } else text += "\n";
  return text;
};

Deno.test("every line of every real file is told as its own tool's", () => {
  const lines = pool();
  let told = 0;
  for (const [tool, own] of lines) {
    for (const line of own) {
      const format = sessionFormatOf(JSON.parse(line));
      assert.equal(format, tool, line.slice(0, 120));
      told += 1;
    }
  }
  assert.ok(told > 7000, `${told} lines`);
});

Deno.test("fuzz: a file of one tool's lines among junk is refused by every other importer, naming the tool", async () => {
  const lines = pool();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "formats-fuzz-"));
  const outcomes = new Map<string, number>();
  try {
    await fuzzAsync("import/formats", heavyRuns(5), async (rng, index) => {
      const tool = rng.pick(sourceTools);
      const own = lines.get(tool);
      assert.ok(own !== undefined && own.length > 0, tool);
      const file = path.join(dir, `f${index}.jsonl`);
      fs.writeFileSync(file, genFile(rng, own));
      assert.equal(sniffSessionFormat(file), tool);
      for (const from of sourceTools) {
        for (const recover of [false, true]) {
          const result = await Effect.runPromise(
            Effect.result(importSession(file, { from, recover })),
          );
          const tag = result._tag === "Success"
            ? "imported"
            : result.failure._tag;
          const key = `${from === tool ? "own" : "other"}:${tag}`;
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
          if (from === tool) {
            assert.notEqual(tag, "ImportNotThisFormat");
            continue;
          }
          assert.equal(tag, "ImportNotThisFormat", `${from} read ${tool}`);
          if (result._tag === "Failure") {
            const failure = result.failure;
            assert.ok(failure._tag === "ImportNotThisFormat");
            assert.equal(failure.looksLike, tool);
            assert.equal(failure.from, from);
          }
        }
      }
      fs.rmSync(file);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(countsReport());
  for (const [key, n] of [...outcomes].sort()) {
    console.log(`fuzz-outcome import/formats ${key}=${n}`);
  }
});
