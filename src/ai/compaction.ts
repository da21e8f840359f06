/**
 * The compaction engine: when the messages a model would be sent grow past
 * a token budget, ask the model for a summary of the oldest history and put
 * it in that history's place, durably and safely.
 *
 * {@link compactIfNeeded} estimates the derived messages (a pluggable
 * {@link TokenEstimate}; {@link estimateTokensByChars} by default) and, over
 * budget, selects the range to compact: the system head stays, the newest
 * messages up to `keepTokens` stay verbatim, and no tool call is split from
 * its result. Then, each step persisted through the store:
 *
 * 1. `compaction/start` is appended: the durable lock. While a compaction
 *    runs in this process on the handle, another one fails with
 *    {@link CompactionInProgress} (`live: true`).
 * 2. The model is asked for the summary (`LanguageModel.generateText`, the
 *    range as the prompt followed by the instructions; when the range holds
 *    tool calls or results, with the session's tools and tool choice
 *    `none`, since providers refuse tool blocks in a request that defines
 *    no tool). A passing failure is retried (`retry`, see `retry.ts`).
 * 3. An empty or blank summary is refused ({@link EmptySummary}): history
 *    is never replaced by nothing. A summary not smaller (by the estimate)
 *    than the messages it would replace is refused ({@link SummaryNotSmaller}).
 * 4. The range must still be on the surface exactly as selected (another
 *    fiber may have appended or rewritten history meanwhile); if not,
 *    {@link CompactionRangeChanged}.
 * 5. `compaction/summary`, the summary `user/message` replacing the range
 *    (citing the start, the summary and every shadowed node) and
 *    `compaction/end` are appended as one batch.
 *
 * Whatever stops the engine after step 1 (a refusal, a model error, an
 * interruption) appends `compaction/end { compactionId, error }` in a
 * release step, so the lock is never left open by a live process. A process
 * that dies mid-compaction leaves the start open: abandoned. The writer that
 * reopens the session holds the writer claim, so every open compaction that
 * no running compaction of its own holds is abandoned, and
 * `compactIfNeeded` closes it first, as `store.repair` does
 * (`compaction/end { compactionId, error: { _tag: "Abandoned" } }`, reported
 * in `recovered`), or, with `onOpen: "refuse"`, fails with
 * {@link CompactionInProgress} (`live: false`). It leaves an open turn
 * alone: it runs inside a turn, and the turn loop closes abandoned turns.
 *
 * {@link isContextOverflow} tells a request refused for its length; the turn
 * loop uses it for overflow recovery: it passes the refused request's
 * estimate as `refusedTokens`, and the compaction then keeps verbatim at
 * most {@link OVERFLOW_KEEP_FRACTION} of it (and always the newest
 * message), since the provider's count beats the estimate.
 *
 * Decisions: the compaction id is `c<seq of its start>`, the summary message
 * id `compaction-<compactionId>` (as `compact` names it), and `turn` in
 * `compaction/start` is the log's current turn (0 before any).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import type * as JsonSchema from "effect/JsonSchema";
import type * as Schema from "effect/Schema";
import {
  type AiError,
  LanguageModel,
  Prompt,
  Tool,
  type Toolkit,
} from "effect/ai";
import { SessionSeq } from "../core/seq.ts";
import type { SessionEvent } from "../core/event.ts";
import type { Message } from "../core/message.ts";
import { interruptedTurnClosers, openWork } from "../session/repair.ts";
import { deriveMessagesWithSources } from "../session/derive.ts";
import { surfaceNodes } from "../surface/mod.ts";
import { type AppendError, Session } from "../session/session.ts";
import { heldEvents } from "../session/prior.ts";
import {
  type CompactableRange,
  selectCompactableRange,
} from "../history/select.ts";
import { currentTurnStep } from "../history/surface_nodes.ts";
import {
  finishCompactionDrafts,
  summaryMessageOf,
} from "../history/compact.ts";
import {
  type AppendResult,
  type SessionHandle,
  SessionStore,
  type WriteError,
} from "../store/store.ts";
import { holdCompaction, liveWork } from "../store/live.ts";
import { appendDrafts, type StoreAppendError } from "./_store.ts";
import {
  CompactionInProgress,
  CompactionRangeChanged,
  EmptySummary,
  SummaryNotSmaller,
} from "./errors.ts";
import { toPrompt } from "./prompt.ts";
import { estimateTokensByChars, type TokenEstimate } from "../core/tokens.ts";
import type { ToolDefinition } from "../providers/tool_definitions.ts";
import { requestTools, type Tools } from "./tools.ts";
import {
  type ModelRetry,
  type ModelRetryAttempt,
  withModelRetry,
} from "./retry.ts";

/**
 * After an overflow, the newest messages kept verbatim are at most this
 * fraction of the estimated size of the request the provider refused.
 */
export const OVERFLOW_KEEP_FRACTION = 0.5;

/** When and how to compact. */
export interface CompactionPolicy {
  /** Compact when the estimated tokens of the derived messages exceed this. */
  readonly maxTokens: number;
  /**
   * Tokens of the newest messages kept verbatim; half of `maxTokens` by
   * default.
   */
  readonly keepTokens?: number;
  /** The token estimate; {@link estimateTokensByChars} by default. */
  readonly estimate?: TokenEstimate;
  /** What the model is asked to do with the range. */
  readonly instructions?: string;
  /**
   * The session's tools, sent with the summary request (tool choice
   * `none`) when the range holds tool calls or results, since providers
   * refuse tool blocks in a request that defines no tool. `runTurn` passes
   * its toolkit when this is absent; without either, each tool the range
   * calls gets a minimal definition (`calledToolDefinitions`).
   */
  readonly tools?: Tools;
}

/**
 * What to do with work a crash left open: `close` it first, as
 * `store.repair` records it (the default), or `refuse` with a tagged error
 * and write nothing.
 */
export type OnOpen = "close" | "refuse";

/** Options of {@link compactIfNeeded}. */
export interface CompactIfNeededOptions extends CompactionPolicy {
  /** A write handle on the session. */
  readonly handle: SessionHandle;
  /** Compact even when under budget (overflow recovery). */
  readonly force?: boolean;
  /**
   * The estimated tokens of a request the provider refused for its length:
   * compacts even when under budget, keeping verbatim at most
   * `OVERFLOW_KEEP_FRACTION` of it (or `keepTokens` when smaller), since
   * the provider's verdict beats the estimate.
   */
  readonly refusedTokens?: number;
  /**
   * How a summary request that failed for a passing reason is retried
   * (`ModelRetry`: 2 retries by default, `0` for none).
   */
  readonly retry?: ModelRetry;
  /** Told each retry of the summary request, before its wait. */
  readonly onRetry?: (attempt: ModelRetryAttempt) => Effect.Effect<void>;
  /**
   * An abandoned compaction in the log: `close` it first (the default) or
   * `refuse` ({@link CompactionInProgress} with `live: false`).
   */
  readonly onOpen?: OnOpen;
  /**
   * Run once the compaction has started (its `compaction/start` is in the
   * log), before the summary is asked for: a harness shows it.
   */
  readonly onStart?: (started: CompactionStarted) => Effect.Effect<void>;
}

/** A compaction that has started: its id and the range it will replace. */
export interface CompactionStarted {
  /** The compaction id. */
  readonly compactionId: string;
  /** The seq of its `compaction/start`. */
  readonly startSeq: SessionSeq;
  /** The range it will replace. */
  readonly range: CompactableRange;
}

/** What {@link compactIfNeeded} did. */
export interface CompactionOutcome {
  /** The session afterwards. */
  readonly session: Session;
  /** True when a summary replaced a range. */
  readonly compacted: boolean;
  /** The estimated tokens before. */
  readonly tokensBefore: number;
  /** The estimated tokens after. */
  readonly tokensAfter: number;
  /** The compaction id, when one ran. */
  readonly compactionId?: string;
  /** The range replaced, when one was. */
  readonly range?: CompactableRange;
  /**
   * The closers of abandoned compactions appended first
   * (`compaction/end` with error `Abandoned`); empty when none was open.
   */
  readonly recovered: ReadonlyArray<SessionEvent>;
}

/** Why {@link compactIfNeeded} refused or failed. */
export type CompactionEngineError =
  | CompactionInProgress
  | EmptySummary
  | SummaryNotSmaller
  | CompactionRangeChanged
  | AiError.AiError
  | AppendError
  | WriteError;

/** The default summary instructions. */
export const DEFAULT_SUMMARY_INSTRUCTIONS: string =
  "Summarize the conversation above for your own later use: the user's goals, the decisions made, what the tools showed, and what is left to do. Be brief; keep names, paths and numbers exactly.";

/**
 * Closes every abandoned compaction of the handle's session (open in the
 * log, held by no running compaction of this process), as `store.repair`
 * records it, under the handle's write permit.
 */
const closeAbandonedCompactions = (
  handle: SessionHandle,
): Effect.Effect<AppendResult, StoreAppendError, SessionStore> =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    return yield* store.update(handle, (session) =>
      Session.appendEvents(
        session,
        interruptedTurnClosers(heldEvents(session), {
          surface: session.surface,
          live: liveWork(handle),
          turns: false,
        }),
      )).pipe(Effect.catchTag("NotAnAppend", (e) => Effect.die(e)));
  });

/** The abandoned compactions of the handle's session. */
const abandonedCompactions = (handle: SessionHandle) => {
  const live = liveWork(handle);
  return openWork(heldEvents(handle.session)).compactions.filter((c) =>
    !live.compactions.has(c.compactionId)
  );
};

/**
 * The tools of a summary request as a toolkit: definitions only, each a
 * dynamic tool with its JSON Schema; tool choice `none` and no resolution,
 * so no handler ever runs.
 */
type SummaryTool = Tool.Dynamic<string, {
  readonly parameters: JsonSchema.JsonSchema;
  readonly success: typeof Schema.Unknown;
  readonly failure: typeof Schema.Never;
  readonly failureMode: "error";
}>;

const summaryToolkit = (
  definitions: ReadonlyArray<ToolDefinition>,
): Toolkit.WithHandler<Record<string, SummaryTool>> => {
  const tools: Record<string, SummaryTool> = {};
  for (const d of definitions) {
    tools[d.name] = Tool.dynamic(d.name, {
      ...(d.description === undefined ? {} : { description: d.description }),
      parameters: d.parameters,
    });
  }
  return {
    tools,
    handle: () => Effect.die("a summary request runs no tool"),
  };
};

const errorInfo = (exit: Exit.Exit<unknown, unknown>): unknown => {
  if (Exit.isSuccess(exit)) return { _tag: "Unknown" };
  if (Exit.hasInterrupts(exit)) return { _tag: "Interrupted" };
  const error = Exit.findErrorOption(exit);
  if (error._tag === "Some") {
    const value = error.value;
    if (typeof value === "object" && value !== null && "_tag" in value) {
      const message = "message" in value ? String(value.message) : undefined;
      return message === undefined
        ? { _tag: String(value._tag) }
        : { _tag: String(value._tag), message };
    }
  }
  return { _tag: "Defect" };
};

/**
 * Compacts the oldest history into a model-written summary when the derived
 * messages are over budget. See the module doc for the steps, the lock and
 * the refusals.
 *
 * @param options The handle, the budget, the estimate and the instructions.
 * @returns `Effect<CompactionOutcome, CompactionEngineError, SessionStore |
 * LanguageModel>`: `compacted: false` when under budget or when nothing can
 * be compacted.
 *
 * @example Compacting under a small budget with a scripted model
 * ```ts
 * import { compactIfNeeded } from "@palimpsest/session/ai";
 * import { layerJsonlStore, SessionStore } from "@palimpsest/session";
 * import { Effect, Layer, Stream } from "effect";
 * import { LanguageModel } from "effect/ai";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const model = Layer.effect(LanguageModel.LanguageModel, LanguageModel.make({
 *   generateText: () => Effect.succeed([{ type: "text", text: "They talked." }]),
 *   streamText: () => Stream.empty,
 * }));
 * const user = (id: string) => ({
 *   type: "user/message" as const, surfaceOp: "append" as const,
 *   data: { id, role: "user" as const, content: [{ type: "text" as const, text: "x".repeat(200) }], source: { kind: "user" } },
 * });
 * const root = fs.mkdtempSync(path.join(os.tmpdir(), "compact-"));
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   const handle = yield* store.create({ id: "s", createdAt: 0, isSeeded: false });
 *   yield* store.append(handle, [user("u0"), user("u1"), user("u2"), user("u3")]);
 *   const outcome = yield* compactIfNeeded({ handle, maxTokens: 150, keepTokens: 60 });
 *   yield* store.close(handle);
 *   return outcome;
 * });
 * const outcome = await Effect.runPromise(
 *   Effect.scoped(program).pipe(Effect.provide(Layer.merge(model, layerJsonlStore({ root })))),
 * );
 * assert.equal(outcome.compacted, true);
 * assert.ok(outcome.tokensAfter < outcome.tokensBefore);
 * ```
 */
export function compactIfNeeded(
  options: CompactIfNeededOptions,
): Effect.Effect<
  CompactionOutcome,
  CompactionEngineError,
  SessionStore | LanguageModel.LanguageModel
> {
  return Effect.scoped(Effect.gen(function* () {
    const { handle } = options;
    const estimate = options.estimate ?? estimateTokensByChars;
    const refused = options.refusedTokens;
    const keepTokens = Math.min(
      options.keepTokens ?? Math.floor(options.maxTokens / 2),
      refused === undefined
        ? Infinity
        : Math.floor(refused * OVERFLOW_KEEP_FRACTION),
    );
    const [abandoned] = abandonedCompactions(handle);
    let recovered: ReadonlyArray<SessionEvent> = [];
    if (abandoned !== undefined) {
      if (options.onOpen === "refuse") {
        return yield* new CompactionInProgress({ ...abandoned, live: false });
      }
      recovered = (yield* closeAbandonedCompactions(handle)).events;
    }
    const session = handle.session;
    const derived = deriveMessagesWithSources(session.surface);
    const tokensBefore = estimate(derived.map((d) => d.message));
    const unchanged: CompactionOutcome = {
      session,
      compacted: false,
      tokensBefore,
      tokensAfter: tokensBefore,
      recovered,
    };
    if (
      options.force !== true && refused === undefined &&
      tokensBefore <= options.maxTokens
    ) {
      return unchanged;
    }
    const bySeq = new Map<number, Message>();
    for (const { seq, message } of derived) bySeq.set(seq, message);
    const nodes = surfaceNodes(session.surface);
    let kept = 0;
    let keep = 0;
    for (let k = nodes.length - 1; k >= 0; k--) {
      const seq = nodes[k];
      const message = seq === undefined ? undefined : bySeq.get(seq);
      const tokens = message === undefined ? 0 : estimate([message]);
      if (kept + tokens > keepTokens) break;
      kept += tokens;
      keep++;
    }
    // After an overflow the newest message stays verbatim whatever its size:
    // it is what the model is asked to answer.
    if (refused !== undefined) keep = Math.max(keep, 1);
    const range = selectCompactableRange(session.surface, { keepLast: keep });
    if (range === undefined) return unchanged;
    const from = nodes.indexOf(range.startSeq);
    const to = nodes.indexOf(range.endSeq);
    const shadowed = nodes.slice(from, to + 1);
    const rangeMessages: Message[] = [];
    for (const seq of shadowed) {
      const message = bySeq.get(seq);
      if (message !== undefined) rangeMessages.push(message);
    }
    const rangeTokens = estimate(rangeMessages);
    const rangeHoldsTools = rangeMessages.some((m) =>
      m.content.some((b) => b.type === "tool-call" || b.type === "tool-result")
    );
    const startSeq = SessionSeq.make(Session.nextSeq(session));
    const compactionId = `c${startSeq}`;
    const running = yield* holdCompaction(handle, compactionId, startSeq);
    if (running !== undefined) {
      return yield* new CompactionInProgress({
        compactionId: running.key,
        startSeq: running.startSeq,
        live: true,
      });
    }
    const instructions = options.instructions ?? DEFAULT_SUMMARY_INSTRUCTIONS;
    let done = false;

    const summarize = Effect.gen(function* () {
      const prompt = Prompt.fromMessages([
        ...toPrompt(rangeMessages).content,
        ...Prompt.make(instructions).content,
      ]);
      const toolkit = rangeHoldsTools
        ? summaryToolkit(requestTools(rangeMessages, options.tools ?? []).tools)
        : undefined;
      const ask: Effect.Effect<
        string,
        AiError.AiError,
        LanguageModel.LanguageModel
      > = toolkit === undefined
        ? Effect.map(LanguageModel.generateText({ prompt }), (r) => r.text)
        : Effect.map(
          LanguageModel.generateText({
            prompt,
            toolkit,
            toolChoice: "none",
            disableToolCallResolution: true,
          }),
          (r) => r.text,
        );
      const summary = yield* withModelRetry(
        ask,
        options.retry,
        options.onRetry ?? (() => Effect.void),
      );
      if (summary.trim() === "") {
        return yield* new EmptySummary({
          compactionId,
          startSeq: range.startSeq,
          endSeq: range.endSeq,
        });
      }
      const summaryMessage = summaryMessageOf(compactionId, summary);
      const summaryTokens = estimate([summaryMessage]);
      if (summaryTokens >= rangeTokens) {
        return yield* new SummaryNotSmaller({
          compactionId,
          summaryTokens,
          rangeTokens,
        });
      }
      const now = surfaceNodes(handle.session.surface);
      const at = now.indexOf(range.startSeq);
      const same = at >= 0 &&
        shadowed.every((seq, i) => now[at + i] === seq);
      if (!same) {
        return yield* new CompactionRangeChanged({
          compactionId,
          startSeq: range.startSeq,
          endSeq: range.endSeq,
        });
      }
      const after = yield* appendDrafts(
        handle,
        finishCompactionDrafts({
          compactionId,
          summary,
          startSeq: range.startSeq,
          endSeq: range.endSeq,
          shadowed,
          startEvent: startSeq,
          summaryEvent: SessionSeq.make(Session.nextSeq(handle.session)),
        }),
      );
      done = true;
      return after;
    });

    const after = yield* Effect.acquireUseRelease(
      appendDrafts(handle, [{
        type: "compaction/start",
        data: { compactionId, turn: currentTurnStep(session).turn },
      }]),
      () =>
        options.onStart === undefined ? summarize : Effect.andThen(
          options.onStart({ compactionId, startSeq, range }),
          summarize,
        ),
      (_, exit) =>
        done ? Effect.void : Effect.ignore(
          appendDrafts(handle, [{
            type: "compaction/end",
            data: { compactionId, error: errorInfo(exit) },
          }]),
        ),
    );
    return {
      session: after,
      compacted: true,
      tokensBefore,
      tokensAfter: estimate(
        deriveMessagesWithSources(after.surface).map((d) => d.message),
      ),
      compactionId,
      range,
      recovered,
    };
  }));
}

/**
 * Closes the compactions a dead process left open: appends
 * `compaction/end { compactionId, error: { _tag: "Abandoned" } }` for each
 * open `compaction/start` that no running compaction of this process holds
 * on the handle. The handle's writer claim proves no other process holds
 * one. `store.repair`, `compactIfNeeded` and `runTurn` do this on their
 * own; this is the same step alone.
 *
 * @param handle A write handle on the session.
 * @returns `Effect<Session, AppendError | WriteError, SessionStore>`: the session,
 * unchanged when no compaction was open.
 *
 * @example Nothing to release
 * ```ts
 * import { releaseStaleCompaction } from "@palimpsest/session/ai";
 * import { layerJsonlStore, SessionStore, Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const root = fs.mkdtempSync(path.join(os.tmpdir(), "release-"));
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   const handle = yield* store.create({ id: "s", createdAt: 0, isSeeded: false });
 *   const session = yield* releaseStaleCompaction(handle);
 *   yield* store.close(handle);
 *   return Session.nextSeq(session);
 * });
 * assert.equal(await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(layerJsonlStore({ root })))), 0);
 * ```
 */
export function releaseStaleCompaction(
  handle: SessionHandle,
): Effect.Effect<Session, AppendError | WriteError, SessionStore> {
  return Effect.suspend(() =>
    abandonedCompactions(handle).length === 0
      ? Effect.succeed(handle.session)
      : Effect.map(closeAbandonedCompactions(handle), (r) => r.session)
  );
}

const OVERFLOW =
  /context (length|window)|too long|too many tokens|maximum (context|prompt)|token limit|exceeds the (context|max)/i;

/**
 * Whether a model error says the request was too long for the context
 * window. `effect/ai` has no reason of its own for it, so this reads an
 * `InvalidRequestError`'s parameter, constraint and description for the
 * words providers use ("context length", "prompt is too long", "maximum
 * context", "too many tokens", "token limit").
 *
 * @param error A model error.
 * @returns True for a context overflow.
 *
 * @example Telling an overflow
 * ```ts
 * import { isContextOverflow } from "@palimpsest/session/ai";
 * import { AiError } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const overflow = AiError.make({
 *   module: "Provider", method: "stream",
 *   reason: new AiError.InvalidRequestError({ description: "prompt is too long: 210000 tokens > 200000 maximum" }),
 * });
 * assert.equal(isContextOverflow(overflow), true);
 * ```
 */
export function isContextOverflow(error: AiError.AiError): boolean {
  const reason = error.reason;
  if (reason._tag !== "InvalidRequestError") return false;
  const text = [reason.parameter, reason.constraint, reason.description]
    .filter((s) => s !== undefined).join(" ");
  return OVERFLOW.test(text);
}
