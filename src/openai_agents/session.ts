/**
 * An OpenAI Agents SDK `Session` over the session store: whatever layer
 * provides `SessionStore` (memory, JSONL, PostgreSQL) keeps an agent's
 * history with the store's promises (durable batches, one writer per
 * session, crash repair).
 *
 * - `addItems` appends the items as events, one stored batch per call
 *   (`items.ts` says which event each item becomes).
 * - `getItems` derives what the model sees now (after compactions,
 *   rewinds and the pairing pass, which answers a call a crash left
 *   unanswered) and reads it back as items.
 * - `popItem` and `clearSession` are checked rewinds: the surface goes
 *   back, the log keeps every event as a branch.
 * - `runCompaction` runs the library's compaction engine
 *   (`compactIfNeeded`) when the session has a compaction policy, as the
 *   SDK's runner calls it after each turn.
 *
 * The session holds its write handle until it is closed (the scope of
 * {@link makeAgentsSession}, or `close` of {@link openAgentsSession}):
 * a second writer, in this process or another, fails `SessionLocked`.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Layer from "effect/Layer";
import * as Scope from "effect/Scope";
import * as Result from "effect/Result";
import type { LanguageModel } from "effect/ai";
import type {
  AgentInputItem,
  OpenAIResponsesCompactionArgs,
  OpenAIResponsesCompactionAwareSession,
  OpenAIResponsesCompactionResult,
} from "@openai/agents";
import type { SessionSeq } from "../core/seq.ts";
import type { Message } from "../core/message.ts";
import { type EventDraft, extensionType, Session } from "../session/session.ts";
import { deriveMessagesWithSources } from "../session/derive.ts";
import { pairToolCalls } from "../providers/pairing.ts";
import { rewind } from "../history/rewind.ts";
import {
  type CreateError,
  type OpenError,
  type SessionHandle,
  SessionStore,
} from "../store/store.ts";
import { openOrCreate } from "../store/open.ts";
import { compactIfNeeded, type CompactionPolicy } from "../ai/compaction.ts";
import {
  findCall,
  isUserItem,
  itemDrafts,
  type ItemProblem,
  itemsOfMessage,
  MARKER_PLUGIN,
  userDraft,
} from "./items.ts";
import { NoRewindPoint, UnknownFunctionCall } from "./errors.ts";

/** The log-only event a session this module creates starts with. */
export const SESSION_EVENT_TYPE = "openai-agents/session";

/** The compaction engine inside a session: a policy and a model. */
export interface AgentsCompaction extends CompactionPolicy {
  /** The model that writes the summaries (an `effect/ai` `LanguageModel`). */
  readonly model: Layer.Layer<LanguageModel.LanguageModel>;
}

/** Options of {@link makeAgentsSession}. */
export interface AgentsSessionOptions {
  /** The session id in the store; created when absent. */
  readonly sessionId: string;
  /** The provider named on assistant messages; `"openai"` by default. */
  readonly provider?: string;
  /** The model named on assistant messages; `"unknown"` by default. */
  readonly model?: string;
  /** Run the library's compaction engine in `runCompaction`. */
  readonly compaction?: AgentsCompaction;
}

/** An OpenAI Agents SDK session kept in the session store. */
export interface AgentsSession extends OpenAIResponsesCompactionAwareSession {
  /** The store handle (its `session` is the session as last stored). */
  readonly handle: SessionHandle;
  /**
   * Runs the compaction engine when the session has a policy: over
   * budget (or with `force`), a summary replaces the oldest history.
   * Resolves `null` when nothing was compacted.
   */
  runCompaction(
    args?: OpenAIResponsesCompactionArgs,
  ): Promise<OpenAIResponsesCompactionResult | null>;
}

/** An {@link AgentsSession} that owns its scope. */
export interface OpenedAgentsSession extends AgentsSession {
  /** Releases the write handle (and the store the session opened). */
  close(): Promise<void>;
}

/** One item of the surface: the node that produced it and the item. */
interface NodeItem {
  readonly seq: SessionSeq;
  readonly item: AgentInputItem;
}

/** The items of the surface, with their nodes, before pairing. */
const nodeItems = (session: Session): NodeItem[] => {
  const names = new Map<string, string>();
  const out: NodeItem[] = [];
  for (const { seq, message } of deriveMessagesWithSources(session.surface)) {
    noteNames(message, names);
    for (const item of itemsOfMessage(message, names)) out.push({ seq, item });
  }
  return out;
};

const noteNames = (message: Message, names: Map<string, string>): void => {
  for (const block of message.content) {
    if (block.type === "tool-call") names.set(block.id, block.name);
  }
};

/** What the model sees: the surface, paired, as items. */
export const modelItems = (session: Session): AgentInputItem[] => {
  const names = new Map<string, string>();
  const out: AgentInputItem[] = [];
  const { messages } = pairToolCalls(
    deriveMessagesWithSources(session.surface).map((m) => m.message),
  );
  for (const message of messages) {
    noteNames(message, names);
    out.push(...itemsOfMessage(message, names));
  }
  return out;
};

/** The drafts, or the batch's refusal. */
const checked = (
  sessionId: string,
  drafts: ReadonlyArray<EventDraft> | ItemProblem,
): Effect.Effect<ReadonlyArray<EventDraft>, UnknownFunctionCall> =>
  "reason" in drafts
    ? Effect.fail(
      new UnknownFunctionCall({
        sessionId,
        callId: drafts.callId,
        index: drafts.index,
      }),
    )
    : Effect.succeed(drafts);

/** The marker that carries a rewind no item of the SDK's can carry. */
const marker = (id: string): Extract<EventDraft, { type: "user/message" }> => ({
  type: "user/message",
  surfaceOp: "append",
  data: {
    id,
    role: "user",
    content: [],
    source: { kind: "plugin", plugin: MARKER_PLUGIN },
  },
});

/** The distinct node seqs of items, in order. */
const nodesOf = (items: ReadonlyArray<NodeItem>): SessionSeq[] => {
  const nodes: SessionSeq[] = [];
  for (const { seq } of items) if (nodes.at(-1) !== seq) nodes.push(seq);
  return nodes;
};

/** A finder of the `tool/call` event of a call id, at seqs before `to`. */
const callFinder = (session: Session, to: number) => (callId: string) =>
  findCall(
    (seq) => Result.getOrUndefined(Session.eventAt(session, seq)),
    session.surface.baseSeq,
    to,
    callId,
  );

/**
 * The points a rewind that keeps some items may go back to, latest first,
 * each with the index of the first node it takes off: right before each
 * node (for the last node, nothing is appended again), then the session's
 * first event (all of it is).
 */
const rewindPoints = (
  session: Session,
  nodes: ReadonlyArray<SessionSeq>,
): Array<readonly [to: number, node: number]> => {
  const points: Array<readonly [number, number]> = [];
  for (let k = nodes.length - 1; k >= 0; k--) {
    const node = nodes[k];
    if (node !== undefined && node - 1 >= session.surface.baseSeq) {
      points.push([node - 1, k]);
    }
  }
  points.push([session.surface.baseSeq, 0]);
  return points;
};

/**
 * Builds an {@link AgentsSession} on the `SessionStore` in context: opens
 * the session for writing (its whole log, which rewinds read), or creates
 * it with a first log-only event ({@link SESSION_EVENT_TYPE}, ignorable)
 * that a `clearSession` rewinds to. The write handle is released when the
 * scope closes.
 *
 * Each method runs its store calls one at a time, in call order, and
 * rejects with the store's or the fold's error (`StorageError`,
 * `WriterClaimLost`, `UnknownFunctionCall`, `NoRewindPoint`, ...), having
 * stored nothing of that call.
 *
 * @example Two runs' items, then a pop
 * ```ts
 * import { layerMemoryStore } from "@palimpsest/session";
 * import { makeAgentsSession } from "@palimpsest/session/openai-agents";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const session = yield* makeAgentsSession({ sessionId: "chat" });
 *   yield* Effect.promise(() => session.addItems([
 *     { role: "user", content: "What is 2 + 2?" },
 *     { type: "message", role: "assistant", status: "completed",
 *       content: [{ type: "output_text", text: "4" }] },
 *   ]));
 *   const popped = yield* Effect.promise(() => session.popItem());
 *   const items = yield* Effect.promise(() => session.getItems());
 *   return [popped?.type, items.length];
 * });
 * const result = await Effect.runPromise(
 *   Effect.scoped(program).pipe(Effect.provide(layerMemoryStore())),
 * );
 * assert.deepEqual(result, ["message", 1]);
 * ```
 *
 * @param options The session id, the names on assistant messages, the
 * compaction policy.
 * @returns `Effect<AgentsSession, CreateError | OpenError, SessionStore | Scope>`.
 */
export function makeAgentsSession(
  options: AgentsSessionOptions,
): Effect.Effect<
  AgentsSession,
  CreateError | OpenError,
  SessionStore | Scope.Scope
> {
  return Effect.gen(function* () {
    const store = yield* SessionStore;
    const id = options.sessionId;
    const { handle, created } = yield* openOrCreate(store, id);
    if (created) {
      yield* store.append(handle, [{
        type: extensionType(SESSION_EVENT_TYPE),
        ignorable: true,
        data: { sessionId: id },
      }]).pipe(Effect.orDie);
    }
    const provider = options.provider ?? "openai";
    const model = options.model ?? "unknown";
    let queue: Promise<unknown> = Promise.resolve();
    // One store call at a time, in call order: the SDK may call without
    // awaiting, and each call builds on the session the last one stored.
    const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
      const next = queue.then(() => Effect.runPromise(effect));
      queue = next.catch(() => undefined);
      return next;
    };

    const addItems = (items: ReadonlyArray<AgentInputItem>) =>
      Effect.gen(function* () {
        if (items.length === 0) return;
        const session = handle.session;
        const drafts = itemDrafts(items, {
          nextSeq: Session.nextSeq(session),
          provider,
          model,
          callEvent: callFinder(session, Session.nextSeq(session)),
        });
        yield* store.append(handle, yield* checked(id, drafts));
      });

    /**
     * Takes the surface back so that it keeps its first `keep` items
     * (before pairing), by a checked rewind: to the latest point whose
     * surface is the nodes the items start with, appending again the kept
     * items of the nodes after it. The first of those carries the rewind
     * when it is a user message; else a marker does.
     */
    const keepOn = (
      session: Session,
      items: ReadonlyArray<NodeItem>,
      keep: number,
    ) =>
      Effect.gen(function* () {
        const nodes = nodesOf(items);
        const at = Session.nextSeq(session);
        for (const [to, k] of rewindPoints(session, nodes)) {
          const node = nodes[k];
          const from = node === undefined
            ? items.length
            : items.findIndex((i) => i.seq === node);
          if (from > keep) continue;
          const again = items.slice(from, keep).map((i) => i.item);
          const [first, ...others] = again;
          const carried = first !== undefined && isUserItem(first);
          const attempt = yield* Effect.result(rewind(session, {
            to,
            event: carried
              ? userDraft(first, `item-${at}`)
              : marker(`item-${at}`),
          }));
          // A point inside open work, or one whose surface is not the kept
          // nodes (a later replacement changed them): try an earlier one.
          if (Result.isFailure(attempt)) continue;
          const rewound = attempt.success;
          const restored = nodesOf(nodeItems(rewound)).filter((s) => s !== at);
          const kept = nodes.slice(0, k);
          if (
            restored.length !== kept.length ||
            restored.some((s, i) => s !== kept[i])
          ) continue;
          const drafts = itemDrafts(carried ? others : again, {
            nextSeq: Session.nextSeq(rewound),
            provider,
            model,
            // A result appended again answers a call appended again or one
            // the restored surface holds, at or before the point.
            callEvent: callFinder(rewound, to + 1),
          });
          return yield* Session.appendAll(rewound, yield* checked(id, drafts));
        }
        return yield* new NoRewindPoint({ sessionId: id, keep });
      });

    const keepItems = (keep: number) =>
      Effect.gen(function* () {
        const items = nodeItems(handle.session);
        if (keep >= items.length) return undefined;
        yield* store.update(handle, (session) => keepOn(session, items, keep));
        return items[keep]?.item;
      });

    const session: AgentsSession = {
      handle,
      getSessionId: () => Promise.resolve(id),
      // Copies in and out, as the SDK's own sessions do: the items the
      // session holds are the log's, and the caller's stay the caller's.
      getItems: (limit) =>
        run(Effect.sync(() => {
          const items = modelItems(handle.session);
          const wanted = limit === undefined
            ? items
            : limit <= 0
            ? []
            : items.slice(-limit);
          return structuredClone(wanted);
        })),
      addItems: (items) =>
        run(Effect.suspend(() => addItems(structuredClone(items)))),
      popItem: () =>
        run(
          Effect.suspend(() =>
            keepItems(Math.max(0, nodeItems(handle.session).length - 1))
          ).pipe(Effect.map((item) => structuredClone(item))),
        ),
      clearSession: () => run(keepItems(0).pipe(Effect.asVoid)),
      runCompaction: (args) => {
        const compaction = options.compaction;
        if (compaction === undefined) return Promise.resolve(null);
        const { model: layer, ...policy } = compaction;
        return run(
          compactIfNeeded({
            ...policy,
            handle,
            ...(args?.force === true ? { force: true } : {}),
          }).pipe(
            Effect.provide(
              Layer.merge(layer, Layer.succeed(SessionStore, store)),
            ),
            Effect.map((outcome) =>
              outcome.compacted
                ? {
                  usage: {
                    inputTokens: 0,
                    outputTokens: 0,
                    totalTokens: 0,
                    inputTokensDetails: {},
                    outputTokensDetails: {},
                  },
                }
                : null
            ),
          ),
        );
      },
    };
    return session;
  });
}

/**
 * Opens an {@link AgentsSession} on a store layer, for code that does not
 * run effects: the layer is built, the session opened (or created), and
 * both are released by `close`.
 *
 * @example A JSONL store
 * ```ts
 * import { layerJsonlStore } from "@palimpsest/session";
 * import { openAgentsSession } from "@palimpsest/session/openai-agents";
 * import assert from "node:assert/strict";
 *
 * const root = Deno.makeTempDirSync();
 * const session = await openAgentsSession(layerJsonlStore({ root }), { sessionId: "chat" });
 * await session.addItems([{ role: "user", content: "hi" }]);
 * await session.close();
 * const again = await openAgentsSession(layerJsonlStore({ root }), { sessionId: "chat" });
 * assert.deepEqual(await again.getItems(), [{ role: "user", content: "hi" }]);
 * await again.close();
 * ```
 *
 * @param store The store layer (`layerJsonlStore`, `layerMemoryStore`,
 * `layerPostgresStore`).
 * @param options As for {@link makeAgentsSession}.
 * @returns The session, with `close`.
 */
export async function openAgentsSession<E>(
  store: Layer.Layer<SessionStore, E>,
  options: AgentsSessionOptions,
): Promise<OpenedAgentsSession> {
  const scope = await Effect.runPromise(Scope.make());
  // The store lives as long as the session: built into the same scope.
  const exit = await Effect.runPromiseExit(
    Layer.buildWithScope(store, scope).pipe(
      Effect.flatMap((context) =>
        makeAgentsSession(options).pipe(
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
  return {
    ...exit.value,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
  };
}
