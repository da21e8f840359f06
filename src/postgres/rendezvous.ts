/**
 * Rendezvous (highest-random-weight) hashing of a session id over server
 * names: each server gets a weight from a hash of its name and the id, and
 * the session belongs to the server of the highest weight. Adding a server
 * moves only the sessions for which the new server weighs most, about 1/N
 * of them with N servers after the addition, and every other session keeps
 * its server; removing one moves only its own sessions.
 *
 * The weight is part of where sessions are stored: a different function
 * would send most sessions to a server that does not hold them (they are
 * still found, at the price of a look at each server; see `sharded.ts`).
 * It is 53 bits from two 32-bit FNV-1a hashes of the UTF-16 code units of
 * `name`, a NUL and the id, each finished with MurmurHash3's mixer, so that
 * names and ids that differ in one character weigh independently; equal
 * weights (about one pair in 2^53) go to the smaller name.
 *
 * @module
 */

const mix = (h: number): number => {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
};

const fnv1a = (text: string, basis: number): number => {
  let h = basis;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
};

/**
 * The weight of server `name` for session `id`: an integer below 2^53.
 *
 * @param name The server's name.
 * @param id The session id.
 * @returns The weight.
 *
 * @example Weights are fixed by the name and the id
 * ```ts
 * import { rendezvousWeight } from "@palimpsest/session/postgres";
 * import assert from "node:assert/strict";
 *
 * assert.equal(rendezvousWeight("a", "chat"), rendezvousWeight("a", "chat"));
 * assert.notEqual(rendezvousWeight("a", "chat"), rendezvousWeight("b", "chat"));
 * ```
 */
export function rendezvousWeight(name: string, id: string): number {
  const key = `${name}\u0000${id}`;
  const high = mix(fnv1a(key, 0x811c9dc5));
  const low = mix(fnv1a(key, 0x9747b28c)) >>> 11;
  return high * 2 ** 21 + low;
}

/**
 * The server names ranked for a session, the one it belongs to first: by
 * weight, highest first, ties to the smaller name.
 *
 * @param id The session id.
 * @param names The servers' names.
 * @returns The names, ranked.
 *
 * @example The first name is the session's server
 * ```ts
 * import { rankServers, serverOfSession } from "@palimpsest/session/postgres";
 * import assert from "node:assert/strict";
 *
 * const ranked = rankServers("chat", ["a", "b", "c"]);
 * assert.equal(ranked.length, 3);
 * assert.equal(ranked[0], serverOfSession("chat", ["c", "b", "a"]));
 * ```
 */
export function rankServers(
  id: string,
  names: ReadonlyArray<string>,
): ReadonlyArray<string> {
  return names
    .map((name) => ({ name, weight: rendezvousWeight(name, id) }))
    .sort((a, b) =>
      b.weight - a.weight || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    )
    .map((server) => server.name);
}

/**
 * The server a session belongs to: the highest weight among `names`
 * (undefined when there is none).
 *
 * @param id The session id.
 * @param names The servers' names.
 * @returns The name of the session's server.
 *
 * @example Adding a server moves a session only to the new server
 * ```ts
 * import { serverOfSession } from "@palimpsest/session/postgres";
 * import assert from "node:assert/strict";
 *
 * for (const id of ["a", "b", "c", "d", "e"]) {
 *   const before = serverOfSession(id, ["s1", "s2", "s3"]);
 *   const after = serverOfSession(id, ["s1", "s2", "s3", "s4"]);
 *   assert.ok(after === before || after === "s4");
 * }
 * ```
 */
export function serverOfSession(
  id: string,
  names: ReadonlyArray<string>,
): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const name of names) {
    const weight = rendezvousWeight(name, id);
    if (
      weight > bestWeight ||
      (weight === bestWeight && best !== undefined && name < best)
    ) {
      best = name;
      bestWeight = weight;
    }
  }
  return best;
}
