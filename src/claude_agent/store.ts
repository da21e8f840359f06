/**
 * A Claude Agent SDK `SessionStore` over the session store: the transcript
 * entries the SDK mirrors are kept in whichever layer provides
 * `SessionStore` (memory, JSONL, PostgreSQL).
 *
 * - `append` keeps each entry whole (a log-only event, so `load` returns
 *   the entries as given, in order) and imports it into the session's
 *   surface with the Claude Code importer, incrementally (`mirror.ts`):
 *   a mirrored session derives, views and exports like an imported one.
 *   One stored batch per call. An entry whose `uuid` is stored already is
 *   skipped (the SDK retries failed batches and replays imports), as the
 *   SDK asks of adapters.
 * - Each key is its own session (`keys.ts`): a subagent transcript is a
 *   subkey (`subpath`), listed by `listSubkeys`.
 * - `delete` removes nothing: it marks the key's generation deleted (an
 *   empty session beside it), so `load` answers `null`, listings leave it
 *   out, and the next `append` starts a new generation. The log of what was
 *   deleted stays.
 * - The store holds the write handle of each session it appended to until
 *   `close`: one writer per session, across processes and machines
 *   (another store handle's `append` to the same key fails
 *   `SessionLocked`).
 *
 * @module
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Layer from "effect/Layer";
import * as Scope from "effect/Scope";
import type {
  SessionKey,
  SessionStore as ClaudeStore,
  SessionStoreEntry,
} from "@anthropic-ai/claude-agent-sdk";
import type { SessionEvent } from "../core/event.ts";
import { type SessionHandle, SessionStore } from "../store/store.ts";
import { openOrCreate } from "../store/open.ts";
import { extensionType } from "../session/session.ts";
import { baseOf, deletedIdOf, generationsOf, idOf } from "./keys.ts";
import {
  builderOf,
  ENTRY_TYPE,
  entryOf,
  feed,
  type Mirror,
  replayMirror,
  seen,
  settle,
} from "./mirror.ts";

/** A Claude Agent SDK session store kept in the session store. */
export interface ClaudeSessionStore extends
  Required<
    Pick<ClaudeStore, "append" | "load">
  > {
  /** See the SDK's `SessionStore.listSessions`. */
  listSessions(
    projectKey: string,
  ): Promise<Array<{ sessionId: string; mtime: number }>>;
  /** See the SDK's `SessionStore.delete`. */
  delete(key: SessionKey): Promise<void>;
  /** See the SDK's `SessionStore.listSubkeys`. */
  listSubkeys(
    key: { projectKey: string; sessionId: string },
  ): Promise<string[]>;
  /** Releases the write handles this store holds. */
  close(): Promise<void>;
}

/** One session this store writes: its handle and its import. */
interface Writer {
  readonly handle: SessionHandle;
  /** Undefined: the log is not one a mirror wrote; entries are only kept. */
  readonly mirror: Mirror | undefined;
  readonly scope: Scope.Closeable;
}

const isEntry = (value: Record<string, unknown>): value is SessionStoreEntry =>
  typeof value["type"] === "string";

/**
 * The session's `cwd` and Claude Code `version`, as the first entries that
 * carry them say: the header of an imported transcript holds them, and the
 * exporters place a session by its `cwd`. A session's header is written
 * with its first batch, so only that batch is looked at.
 */
const settingsOf = (
  entries: ReadonlyArray<SessionStoreEntry>,
): { cwd?: string; version?: string } => {
  const first = (name: string): string | undefined => {
    for (const entry of entries) {
      const value = entry[name];
      if (typeof value === "string") return value;
    }
    return undefined;
  };
  const cwd = first("cwd");
  const version = first("version");
  return {
    ...(cwd === undefined ? {} : { cwd }),
    ...(version === undefined ? {} : { version }),
  };
};

/** The entries a session's events keep, in order. */
const entriesOf = (
  events: ReadonlyArray<SessionEvent>,
): SessionStoreEntry[] => {
  const out: SessionStoreEntry[] = [];
  for (const event of events) {
    const entry = entryOf(event);
    // A copy: the memory layer hands out the stored values themselves.
    if (entry !== undefined && isEntry(entry)) out.push(structuredClone(entry));
  }
  return out;
};

/**
 * Builds a {@link ClaudeSessionStore} on the `SessionStore` in context. Give
 * it to the SDK's `query` as `options.sessionStore`. Its calls run one at a
 * time, in call order; each rejects with the store's error (`StorageError`,
 * `SessionLocked`, ...) having stored nothing of that call. The write
 * handles it takes are released when the scope closes (or by `close`).
 *
 * @example Append, load, list
 * ```ts
 * import { layerMemoryStore } from "@palimpsest/session";
 * import { makeClaudeSessionStore } from "@palimpsest/session/claude-agent";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* makeClaudeSessionStore();
 *   const key = { projectKey: "p", sessionId: "s" };
 *   const entry = { type: "user", uuid: "u1", message: { role: "user", content: "hi" } };
 *   yield* Effect.promise(() => store.append(key, [entry]));
 *   const loaded = yield* Effect.promise(() => store.load(key));
 *   const listed = yield* Effect.promise(() => store.listSessions("p"));
 *   return [loaded, listed.map((s) => s.sessionId)];
 * });
 * const [loaded, ids] = await Effect.runPromise(
 *   Effect.scoped(program).pipe(Effect.provide(layerMemoryStore())),
 * );
 * assert.deepEqual(loaded, [{ type: "user", uuid: "u1", message: { role: "user", content: "hi" } }]);
 * assert.deepEqual(ids, ["s"]);
 * ```
 *
 * @returns `Effect<ClaudeSessionStore, never, SessionStore | Scope>`.
 */
export function makeClaudeSessionStore(): Effect.Effect<
  ClaudeSessionStore,
  never,
  SessionStore | Scope.Scope
> {
  return Effect.gen(function* () {
    const store = yield* SessionStore;
    const writers = new Map<string, Writer>();
    let queue: Promise<unknown> = Promise.resolve();
    // One call at a time, in call order: the SDK appends without awaiting
    // and a batch builds on the import state the last one left.
    const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
      const next = queue.then(() => Effect.runPromise(effect));
      queue = next.catch(() => undefined);
      return next;
    };

    const release = (id: string) =>
      Effect.suspend(() => {
        const writer = writers.get(id);
        writers.delete(id);
        return writer === undefined
          ? Effect.void
          : Scope.close(writer.scope, Exit.void);
      });
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...writers.keys()], release, { discard: true })
    );

    /** The live generation of a key, or the one its next append starts. */
    const generation = (key: SessionKey) =>
      Effect.map(store.list(), (ids) => {
        const latest = generationsOf(ids).latest.get(baseOf(key));
        if (latest === undefined) return { generation: 0, live: false };
        return latest.deleted
          ? { generation: latest.generation + 1, live: false }
          : { generation: latest.generation, live: true };
      });

    const writerOf = (
      key: SessionKey,
      id: string,
      first: ReadonlyArray<SessionStoreEntry>,
    ) =>
      Effect.gen(function* () {
        const held = writers.get(id);
        if (held !== undefined) return held;
        const scope = yield* Scope.make();
        const opened = yield* openOrCreate(store, id, () => ({
          importedFrom: {
            tool: "claude-code",
            ...key,
            ...settingsOf(first),
          },
        })).pipe(
          Scope.provide(scope),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
        );
        const handle = opened.handle;
        const events = opened.created ? [] : yield* store.events(handle).pipe(
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
        );
        const writer: Writer = {
          handle,
          mirror: replayMirror(events),
          scope,
        };
        writers.set(id, writer);
        return writer;
      });

    const append = (
      key: SessionKey,
      entries: ReadonlyArray<SessionStoreEntry>,
    ) =>
      Effect.gen(function* () {
        if (entries.length === 0) return;
        const { generation: g } = yield* generation(key);
        const id = idOf(key, g);
        const writer = yield* writerOf(key, id, entries);
        const { handle, mirror } = writer;
        const from = handle.session.surface.nextSeq;
        if (mirror === undefined) {
          yield* store.append(
            handle,
            entries.map((entry) => ({
              type: extensionType(ENTRY_TYPE),
              ignorable: true as const,
              data: entry,
            })),
          );
          return;
        }
        for (const entry of entries) {
          if (!seen(mirror, entry)) feed(mirror, structuredClone(entry));
        }
        settle(mirror);
        const events = builderOf(mirror).events.slice(from);
        yield* store.appendEvents(handle, events).pipe(
          // The import ran ahead of the store: start again from the log.
          Effect.onError(() => release(id)),
        );
      });

    const load = (key: SessionKey) =>
      Effect.gen(function* () {
        const { generation: g, live } = yield* generation(key);
        if (!live) return null;
        const entries = yield* Effect.scoped(
          Effect.gen(function* () {
            const handle = yield* store.open(idOf(key, g), { wholeLog: true });
            return entriesOf(yield* store.events(handle));
          }),
        );
        return entries.length === 0 ? null : entries;
      });

    const live = () =>
      Effect.map(
        store.list(),
        (ids) =>
          [...generationsOf(ids).latest.values()].filter((g) => !g.deleted),
      );

    const markDeleted = (key: SessionKey, g: number) =>
      Effect.gen(function* () {
        yield* release(idOf(key, g));
        const createdAt = yield* Clock.currentTimeMillis;
        yield* Effect.scoped(
          store.create({ id: deletedIdOf(key, g), createdAt, isSeeded: false })
            .pipe(Effect.catchTag("SessionAlreadyExists", () => Effect.void)),
        );
      });

    const remove = (key: SessionKey) =>
      Effect.gen(function* () {
        const targets = (yield* live()).filter((g) =>
          g.key.projectKey === key.projectKey &&
          g.key.sessionId === key.sessionId &&
          (key.subpath === undefined || g.key.subpath === key.subpath)
        );
        for (const target of targets) {
          yield* markDeleted(target.key, target.generation);
        }
      });

    const listSessions = (projectKey: string) =>
      Effect.gen(function* () {
        const out: Array<{ sessionId: string; mtime: number }> = [];
        for (const g of yield* live()) {
          if (g.key.projectKey !== projectKey || g.key.subpath !== undefined) {
            continue;
          }
          const stat = yield* store.stat(idOf(g.key, g.generation));
          out.push({
            sessionId: g.key.sessionId,
            mtime: Math.floor(stat.modifiedAt),
          });
        }
        return out;
      });

    const listSubkeys = (key: { projectKey: string; sessionId: string }) =>
      Effect.map(
        live(),
        (gens) =>
          gens.flatMap((g) =>
            g.key.projectKey === key.projectKey &&
              g.key.sessionId === key.sessionId && g.key.subpath !== undefined
              ? [g.key.subpath]
              : []
          ),
      );

    const claude: ClaudeSessionStore = {
      append: (key, entries) => run(append(key, entries)),
      load: (key) => run(load(key)),
      listSessions: (projectKey) => run(listSessions(projectKey)),
      delete: (key) => run(remove(key)),
      listSubkeys: (key) => run(listSubkeys(key)),
      close: () =>
        run(Effect.forEach([...writers.keys()], release, { discard: true })),
    };
    return claude;
  });
}

/**
 * Opens a {@link ClaudeSessionStore} on a store layer, for code that does
 * not run effects; `close` releases it and the layer.
 *
 * @example A JSONL store
 * ```ts
 * import { layerJsonlStore } from "@palimpsest/session";
 * import { openClaudeSessionStore } from "@palimpsest/session/claude-agent";
 * import assert from "node:assert/strict";
 *
 * const store = await openClaudeSessionStore(layerJsonlStore({ root: Deno.makeTempDirSync() }));
 * await store.append({ projectKey: "p", sessionId: "s" }, [{ type: "custom-title", title: "t" }]);
 * assert.deepEqual(await store.load({ projectKey: "p", sessionId: "s" }), [{ type: "custom-title", title: "t" }]);
 * await store.close();
 * ```
 *
 * @param layer The store layer.
 * @returns The store, with `close`.
 */
export async function openClaudeSessionStore<E>(
  layer: Layer.Layer<SessionStore, E>,
): Promise<ClaudeSessionStore> {
  const scope = await Effect.runPromise(Scope.make());
  const exit = await Effect.runPromiseExit(
    Layer.buildWithScope(layer, scope).pipe(
      Effect.flatMap((context) =>
        makeClaudeSessionStore().pipe(
          Effect.provideContext(context),
          Scope.provide(scope),
        )
      ),
    ),
  );
  if (Exit.isFailure(exit)) {
    await Effect.runPromise(Scope.close(scope, exit));
    return Effect.runPromise(Effect.failCause(exit.cause));
  }
  const claude = exit.value;
  return {
    ...claude,
    close: async () => {
      await claude.close();
      await Effect.runPromise(Scope.close(scope, Exit.void));
    },
  };
}
