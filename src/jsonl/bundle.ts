/**
 * A portable bundle: one file that moves a session between machines and
 * stores. Its first line is the manifest (`palimpsestBundle`, the session's
 * header and metadata, the log's length and SHA-256, the checkpoint's text
 * when the session file had one); the rest is the session's log, byte for
 * byte, so the bundle is read by the same reader, which checks every v3
 * rule, and a JSONL destination gets the same bytes, to which the carried
 * checkpoint still applies.
 *
 * {@link bundleFile} reads a session file (and its checkpoint sidecar);
 * {@link writeBundle} writes the bundle as a new file; {@link readBundle}
 * reads one back as a session (for any store's `create`);
 * {@link unbundleToFolder} publishes it in a JSONL folder with its
 * checkpoint. A torn final line of the source is left out, as every reader
 * leaves it out.
 *
 * @module
 */
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import { createHash } from "node:crypto";
import type { SessionHeader } from "../session/session.ts";
import type { SessionEvent } from "../core/event.ts";
import type { Session } from "../session/session.ts";
import { quote } from "../core/quote.ts";
import { type LoadedLog, readSessionBytes } from "../log/reader.ts";
import type { LogReadError } from "../log/errors.ts";
import { ioError } from "../fs/io.ts";
import { type FileIoError, TargetExists } from "../fs/errors.ts";
import { nodeAppendIo, publishNewFile, writeAll } from "../fs/durable_file.ts";
import { encodeSessionId } from "../store/ids.ts";
import { readCheckpointFile, writeCheckpointFile } from "./checkpoint_file.ts";

/** The bundle format this module writes and reads. */
export const BUNDLE_VERSION = 1;

/** A bundle's first line. */
export interface BundleManifest {
  /** The bundle format ({@link BUNDLE_VERSION}). */
  readonly palimpsestBundle: number;
  /** The session's header. */
  readonly header: SessionHeader;
  /** What a store lists of the session: its events and when it was bundled. */
  readonly metadata: {
    /** The log's events. */
    readonly events: number;
    /** The log's format version. */
    readonly version: number;
    /** Epoch milliseconds when the bundle was made. */
    readonly bundledAt: number;
  };
  /** The log's length in bytes. */
  readonly bytes: number;
  /** The log's SHA-256, hex. */
  readonly sha256: string;
  /** The session file's checkpoint, as the store wrote it; `null` without one. */
  readonly checkpoint: string | null;
}

/** A bundle in memory: its manifest and the log's bytes. */
export interface Bundle {
  /** The manifest. */
  readonly manifest: BundleManifest;
  /** The log, byte for byte. */
  readonly log: Uint8Array;
}

/** A bundle read back: the session, its events, and the bundle. */
export interface Unbundled {
  /** The session, folded by the reader. */
  readonly session: Session;
  /** Its events, in seq order. */
  readonly events: ReadonlyArray<SessionEvent>;
  /** The bundle. */
  readonly bundle: Bundle;
}

/** A file that is no bundle, or whose log is not the one its manifest names. */
export class BundleInvalid extends Data.Error<{
  /** The bundle file. */
  readonly path: string;
  /** What is wrong. */
  readonly problem: string;
}> {
  /** The tag. */
  readonly _tag: "BundleInvalid" = "BundleInvalid";
  /** A sentence for people. */
  override readonly message: string = `Expected ${
    quote(this.path)
  } to be a palimpsest bundle, but ${this.problem}`;
}

const sha256 = (bytes: Uint8Array): string =>
  createHash("sha256").update(bytes).digest("hex");

const readAll = (
  path: string,
): Effect.Effect<Uint8Array, FileIoError> =>
  Effect.try({
    try: () => new Uint8Array(fs.readFileSync(path)),
    catch: (cause) => ioError("read", path, cause),
  });

/**
 * Reads a session file and its checkpoint as a bundle; the log is read
 * through the reader first, so a log that breaks a rule is refused.
 *
 * @param path The session file (JSONL, current format).
 * @returns The bundle.
 *
 * @example Bundling a session file
 * ```ts
 * import { bundleFile, readBundle, writeBundle } from "@palimpsest/session/jsonl";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/s.jsonl`, '{"type":"session","version":3,"id":"s","createdAt":0,"isSeeded":false}\n');
 * const bundle = Effect.runSync(bundleFile(`${dir}/s.jsonl`));
 * Effect.runSync(writeBundle(bundle, `${dir}/s.bundle`));
 * const back = Effect.runSync(readBundle(`${dir}/s.bundle`));
 * assert.equal(back.session.header.id, "s");
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function bundleFile(
  path: string,
): Effect.Effect<Bundle, FileIoError | LogReadError> {
  return Effect.gen(function* () {
    const bytes = yield* readAll(path);
    const loaded: LoadedLog = yield* readSessionBytes(bytes);
    const torn = loaded.report.tornTail;
    const log = torn === undefined ? bytes : bytes.subarray(0, torn.offset);
    const stored = yield* readCheckpointFile(path);
    return {
      manifest: {
        palimpsestBundle: BUNDLE_VERSION,
        header: loaded.session.header,
        metadata: {
          events: loaded.events.length,
          version: loaded.version,
          bundledAt: yield* Effect.clockWith((c) => c.currentTimeMillis),
        },
        bytes: log.length,
        sha256: sha256(log),
        checkpoint: typeof stored === "string" ? stored : null,
      },
      log,
    };
  });
}

/**
 * Writes a bundle as a new file, never replacing one.
 *
 * @param bundle The bundle.
 * @param path The new file.
 * @returns Nothing, or why it was not written.
 */
export function writeBundle(
  bundle: Bundle,
  path: string,
): Effect.Effect<void, FileIoError | TargetExists> {
  return Effect.suspend(() => {
    if (fs.existsSync(path)) return Effect.fail(new TargetExists({ path }));
    return publishNewFile(path, (fd, temp) =>
      Effect.try({
        try: () => {
          const head = new TextEncoder().encode(
            `${JSON.stringify(bundle.manifest)}\n`,
          );
          writeAll(nodeAppendIo, fd, head, 0);
          writeAll(nodeAppendIo, fd, bundle.log, head.length);
        },
        catch: (cause) => ioError("write", temp, cause),
      }));
  });
}

const manifestOf = (
  path: string,
  text: string,
): Result.Result<BundleManifest, BundleInvalid> => {
  const invalid = (problem: string) =>
    Result.fail(new BundleInvalid({ path, problem }));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid("its first line is not JSON");
  }
  if (
    typeof value !== "object" || value === null ||
    Reflect.get(value, "palimpsestBundle") !== BUNDLE_VERSION
  ) {
    return invalid(
      `its first line is no bundle manifest of version ${BUNDLE_VERSION}`,
    );
  }
  const sha = Reflect.get(value, "sha256");
  const bytes = Reflect.get(value, "bytes");
  const checkpoint = Reflect.get(value, "checkpoint");
  const header = Reflect.get(value, "header");
  const metadata = Reflect.get(value, "metadata");
  if (
    typeof sha !== "string" || typeof bytes !== "number" ||
    (checkpoint !== null && typeof checkpoint !== "string") ||
    typeof header !== "object" || header === null ||
    typeof metadata !== "object" || metadata === null
  ) {
    return invalid("its manifest lacks the log's length, hash or header");
  }
  return Result.succeed({
    palimpsestBundle: BUNDLE_VERSION,
    // The header and metadata are checked again by the reader (the log's
    // own header line) and only reported from here.
    header: {
      id: String(Reflect.get(header, "id")),
      createdAt: Number(Reflect.get(header, "createdAt")),
      isSeeded: Reflect.get(header, "isSeeded") === true,
    },
    metadata: {
      events: Number(Reflect.get(metadata, "events")),
      version: Number(Reflect.get(metadata, "version")),
      bundledAt: Number(Reflect.get(metadata, "bundledAt")),
    },
    bytes,
    sha256: sha,
    checkpoint,
  });
};

/**
 * Reads a bundle back as a session: the log must be the one its manifest
 * names (length and SHA-256), and is read by the reader, which checks every
 * rule. The session goes into any store with `create`.
 *
 * @param path The bundle file.
 * @returns The session, its events and the bundle.
 */
export function readBundle(
  path: string,
): Effect.Effect<Unbundled, FileIoError | LogReadError | BundleInvalid> {
  return Effect.gen(function* () {
    const bytes = yield* readAll(path);
    const newline = bytes.indexOf(0x0a);
    if (newline < 0) {
      return yield* new BundleInvalid({
        path,
        problem: "it has no manifest line",
      });
    }
    const manifest = yield* Effect.fromResult(
      manifestOf(path, new TextDecoder().decode(bytes.subarray(0, newline))),
    );
    const log = bytes.subarray(newline + 1);
    if (log.length !== manifest.bytes || sha256(log) !== manifest.sha256) {
      return yield* new BundleInvalid({
        path,
        problem:
          "its log is not the one its manifest names (length or SHA-256)",
      });
    }
    const loaded = yield* readSessionBytes(log);
    return {
      session: loaded.session,
      events: loaded.events,
      bundle: { manifest: { ...manifest, header: loaded.session.header }, log },
    };
  });
}

/**
 * Publishes a bundle's session in a JSONL store's folder: the log's bytes
 * as the session's file (never replacing one), then the carried checkpoint
 * beside it, which applies to those bytes.
 *
 * @param path The bundle file.
 * @param root The store's folder.
 * @returns The session file written and the session read back.
 */
export function unbundleToFolder(
  path: string,
  root: string,
): Effect.Effect<
  Unbundled & { readonly file: string },
  FileIoError | LogReadError | BundleInvalid | TargetExists
> {
  return Effect.gen(function* () {
    const unbundled = yield* readBundle(path);
    const name = encodeSessionId(unbundled.session.header.id);
    if (Result.isFailure(name)) {
      return yield* new BundleInvalid({
        path,
        problem: `its session id ${
          quote(unbundled.session.header.id)
        } cannot name a file`,
      });
    }
    const file = nodePath.join(root, `${name.success}.jsonl`);
    if (fs.existsSync(file)) return yield* new TargetExists({ path: file });
    yield* publishNewFile(file, (fd, temp) =>
      Effect.try({
        try: () => writeAll(nodeAppendIo, fd, unbundled.bundle.log, 0),
        catch: (cause) => ioError("write", temp, cause),
      }));
    const checkpoint = unbundled.bundle.manifest.checkpoint;
    if (checkpoint !== null) yield* writeCheckpointFile(file, checkpoint);
    return { ...unbundled, file };
  });
}
