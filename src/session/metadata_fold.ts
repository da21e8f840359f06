/**
 * A session's metadata as values: its title, tags, labels, working
 * directory and free values, and the fold of the `session/metadata` events
 * that set them, the last write winning ({@link applyMetadata}). Reading a
 * session's is `metadata.ts`; writing them is `src/history/metadata.ts`.
 *
 * @module
 */
import type { SessionEvent, SessionMetadataData } from "../core/event.ts";

/** What a session's `session/metadata` events have set so far. */
export interface SessionMetadata {
  /** The title, if set. */
  readonly title: string | undefined;
  /** The tags, in the order they were set, each once. */
  readonly tags: ReadonlyArray<string>;
  /** The labels, by key. */
  readonly labels: { readonly [key: string]: string };
  /** The working directory, if set. */
  readonly cwd: string | undefined;
  /** The free values, by key, opaque JSON. */
  readonly values: { readonly [key: string]: unknown };
}

/** The metadata of a log with no `session/metadata` event. */
export const EMPTY_METADATA: SessionMetadata = {
  title: undefined,
  tags: [],
  labels: {},
  cwd: undefined,
  values: {},
};

/** A record merged with `patch`, a `null` value removing its key. */
const merged = <V>(
  base: { readonly [key: string]: V },
  patch: { readonly [key: string]: V | null },
  keep: (value: V | null) => value is V,
): { readonly [key: string]: V } => {
  const out: { [key: string]: V } = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (keep(value)) out[key] = value;
    else delete out[key];
  }
  return out;
};

const isString = (value: string | null): value is string => value !== null;
const isPresent = (value: unknown): value is unknown => value !== null;

/**
 * The metadata after one `session/metadata` event's data: `title` and `cwd`
 * replaced (`null` clears), `tags` replaced as a set, `labels` and `values`
 * merged by key (`null` removes a key).
 *
 * @param metadata The metadata before.
 * @param data The event's data.
 * @returns The metadata after.
 *
 * @example The last write wins
 * ```ts
 * import { applyMetadata, EMPTY_METADATA } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const once = applyMetadata(EMPTY_METADATA, { title: "a", labels: { team: "x" } });
 * const twice = applyMetadata(once, { title: "b", labels: { team: null, env: "ci" } });
 * assert.equal(twice.title, "b");
 * assert.deepEqual(twice.labels, { env: "ci" });
 * ```
 */
export function applyMetadata(
  metadata: SessionMetadata,
  data: SessionMetadataData,
): SessionMetadata {
  return {
    title: data.title === undefined ? metadata.title : data.title ?? undefined,
    tags: data.tags === undefined ? metadata.tags : [...new Set(data.tags)],
    labels: data.labels === undefined
      ? metadata.labels
      : merged(metadata.labels, data.labels, isString),
    cwd: data.cwd === undefined ? metadata.cwd : data.cwd ?? undefined,
    values: data.values === undefined
      ? metadata.values
      : merged(metadata.values, data.values, isPresent),
  };
}

/**
 * The metadata after the `session/metadata` events among `events`.
 *
 * @param metadata The metadata before.
 * @param events Events in seq order.
 * @returns The metadata after.
 */
export const foldMetadata = (
  metadata: SessionMetadata,
  events: Iterable<SessionEvent>,
): SessionMetadata => {
  let out = metadata;
  for (const event of events) {
    if (event.type === "session/metadata") {
      out = applyMetadata(out, event.data);
    }
  }
  return out;
};
