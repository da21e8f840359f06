/**
 * Where the real session files of other tools are kept: `../shared/peer-logs`
 * beside the repository (or beside a worktree's parent). Tests read them
 * there and never copy them into the repository.
 */
import { isSourceTool, type SourceTool } from "@palimpsest/session/import";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../", import.meta.url));

/** The folder of the study logs; throws when it is missing. */
export const peerLogs = (): string => {
  const candidates = [
    path.join(repo, "..", "shared", "peer-logs"),
    path.join(repo, "..", "..", "shared", "peer-logs"),
  ];
  const found = candidates.find((c) => fs.existsSync(c));
  if (found === undefined) {
    throw new Error(
      `Expected the study logs at ${JSON.stringify(candidates[0])}`,
    );
  }
  return found;
};

/** Every file under `dir`, recursively, as paths relative to it, sorted. */
export const walk = (dir: string, prefix = ""): string[] =>
  fs.readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) =>
      e.isDirectory()
        ? walk(path.join(dir, e.name), `${prefix}${e.name}/`)
        : [`${prefix}${e.name}`]
    );

/** A study session file and the tool that wrote it. */
export interface StudySession {
  /** Its path under the study folder. */
  readonly rel: string;
  /** The tool, named by a folder of its path. */
  readonly from: SourceTool;
}

/** The study's session files under `base` (not its oracles or notes). */
export const studySessions = (base: string): StudySession[] =>
  walk(base).filter((rel) =>
    !rel.startsWith("expected/") && !rel.endsWith(".md")
  ).map((rel) => {
    const from = rel.split("/").find(isSourceTool);
    assert.ok(from !== undefined, `no importer for ${rel}`);
    return { rel, from };
  });

/** The names of the files whose next request the tools' own code gave. */
export const oracleNames = (base: string): ReadonlySet<string> =>
  new Set(
    walk(path.join(base, "expected")).map((rel) =>
      path.basename(rel, ".next.json")
    ),
  );
