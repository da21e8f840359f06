/**
 * Claude Agent SDK session keys and the session ids that keep them: a key
 * (`projectKey`, `sessionId`, `subpath`) at generation `g` is the session
 * `cc:<projectKey>:<sessionId>[:<subpath>]@<g>`, each part written with
 * `encodeURIComponent` (which writes `:` and `@`), so that an id reads back
 * as its key. `delete` never removes a session: it creates the empty
 * session `<id>@deleted`, and the key's next append starts generation
 * `g + 1`. So the store lists the live generations from the ids alone.
 *
 * @module
 */
import type { SessionKey } from "@anthropic-ai/claude-agent-sdk";

const PREFIX = "cc:";
const DELETED = "@deleted";

/** A stored id, read back. */
export interface KeyId {
  /** The key. */
  readonly key: SessionKey;
  /** The generation. */
  readonly generation: number;
  /** Whether this is a generation's deletion marker. */
  readonly deleted: boolean;
}

/** The id of a key without its generation. */
export const baseOf = (key: SessionKey): string =>
  PREFIX + [key.projectKey, key.sessionId].map(encodeURIComponent).join(":") +
  (key.subpath === undefined ? "" : `:${encodeURIComponent(key.subpath)}`);

/** The session id of a key's generation. */
export const idOf = (key: SessionKey, generation: number): string =>
  `${baseOf(key)}@${generation}`;

/** The id of the marker that says a generation was deleted. */
export const deletedIdOf = (key: SessionKey, generation: number): string =>
  idOf(key, generation) + DELETED;

/** A stored id as a key, or undefined for an id that is not one of ours. */
export const parseId = (id: string): KeyId | undefined => {
  if (!id.startsWith(PREFIX)) return undefined;
  const deleted = id.endsWith(DELETED);
  const body = id.slice(PREFIX.length, deleted ? -DELETED.length : undefined);
  const at = body.lastIndexOf("@");
  const generation = Number(body.slice(at + 1));
  if (at < 0 || !Number.isSafeInteger(generation)) return undefined;
  const parts = body.slice(0, at).split(":").map(decodeURIComponent);
  const [projectKey, sessionId, subpath, ...rest] = parts;
  if (projectKey === undefined || sessionId === undefined || rest.length > 0) {
    return undefined;
  }
  return {
    key: subpath === undefined
      ? { projectKey, sessionId }
      : { projectKey, sessionId, subpath },
    generation,
    deleted,
  };
};

/** Where each key stands: its latest generation and whether it was deleted. */
export interface Generations {
  /** The latest generation of each key's base id, and whether it is deleted. */
  readonly latest: ReadonlyMap<
    string,
    { readonly key: SessionKey; readonly generation: number; deleted: boolean }
  >;
}

/** The generations of the stored ids. */
export const generationsOf = (ids: ReadonlyArray<string>): Generations => {
  const latest = new Map<
    string,
    { key: SessionKey; generation: number; deleted: boolean }
  >();
  for (const id of ids) {
    const parsed = parseId(id);
    if (parsed === undefined) continue;
    const base = baseOf(parsed.key);
    const seen = latest.get(base);
    if (seen === undefined || parsed.generation > seen.generation) {
      latest.set(base, {
        key: parsed.key,
        generation: parsed.generation,
        deleted: parsed.deleted,
      });
    } else if (parsed.generation === seen.generation && parsed.deleted) {
      seen.deleted = true;
    }
  }
  return { latest };
};
