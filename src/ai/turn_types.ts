/**
 * The types of a turn: {@link RunTurnOptions}, what a turn reports as it
 * goes ({@link TurnEvent}) and when it ends ({@link TurnOutcome},
 * {@link TurnUsage}, {@link CompactionReport}), its errors, and the codes
 * of the tool results the loop writes itself. The loop is `turn.ts`.
 *
 * @module
 */
import type * as Duration from "effect/Duration";
import type * as Effect from "effect/Effect";
import type { AiError, Response, Tool, Toolkit } from "effect/ai";
import type { SessionSeq } from "../core/seq.ts";
import type { SessionEvent, TurnEndReason } from "../core/event.ts";
import type { AppendError, EventDraft, Session } from "../session/session.ts";
import type { PartialAnswerPolicy } from "../session/repair.ts";
import type { SessionHandle, WriteError } from "../store/store.ts";
import type { PairingRepair } from "../providers/pairing.ts";
import type { CompactionPolicy, OnOpen } from "./compaction.ts";
import type {
  CompactionInProgress,
  CompactionRangeChanged,
  EmptySummary,
  OverflowNotRecovered,
  SummaryNotSmaller,
  TurnInProgress,
} from "./errors.ts";
import type { ModelRetry } from "./retry.ts";

/** Error code of a tool result for a tool the toolkit does not have. */
export const TOOL_NOT_FOUND = "TOOL_NOT_FOUND" as const;
/** Error code of a tool result for arguments the tool refused. */
export const INVALID_ARGUMENTS = "INVALID_ARGUMENTS" as const;
/** Error code of a tool result for a tool that failed. */
export const TOOL_FAILED = "TOOL_FAILED" as const;

/**
 * How the turn loop batches a streaming answer's parts into
 * `assistant/partial` events: a batch is written once the parts waiting
 * reach `maxBytes` of JSON, or `interval` after the first of them arrived,
 * whichever comes first. Each batch is one durable store append.
 */
export interface PartialOptions {
  /** The longest a streamed part waits before it is written; 100 ms by default. */
  readonly interval?: Duration.Input;
  /** The JSON bytes of waiting parts that make a batch; 4096 by default. */
  readonly maxBytes?: number;
}

/** Options of {@link runTurn}. */
export interface RunTurnOptions<Tools extends Record<string, Tool.Any>> {
  /** A write handle on the session. */
  readonly handle: SessionHandle;
  /** The tools the model may call, with their handlers. */
  readonly toolkit: Toolkit.WithHandler<Tools>;
  /** The provider and model, recorded as the assistant messages' source. */
  readonly model: { readonly provider: string; readonly model: string };
  /**
   * What starts the turn: a user message's text, or drafts appended right
   * after `turn/start`. Nothing by default (the model goes on from the log).
   */
  readonly input?: string | ReadonlyArray<EventDraft>;
  /**
   * The system prompt of this turn's requests. When it differs from the
   * session's (its head `system/message`), `setSystemPrompt` records it
   * right after `turn/start`, so the log replays every request as sent;
   * the same prompt appends nothing. `""` means none. A session without a
   * system head (created without one, or imported) gets one before its
   * first message (`surfaceOp: "prepend"`). Absent: the session's prompt
   * stays.
   */
  readonly system?: string;
  /** The most model requests in the turn; 8 by default. */
  readonly maxSteps?: number;
  /** Compact before each request when over budget, and on overflow. */
  readonly compaction?: CompactionPolicy;
  /** Tells a context overflow; {@link isContextOverflow} by default. */
  readonly isContextOverflow?: (error: AiError.AiError) => boolean;
  /** How many times one step retries after an overflow; 2 by default. */
  readonly maxOverflowRetries?: number;
  /**
   * How a request that failed for a passing reason (a status 408, 409,
   * 429, 5xx or 529, a connection reset; `isTransientError`) is sent again:
   * a number of retries with the default backoff, or a `Schedule`; `0`
   * turns retries off. 2 retries by default, per step and per summary
   * request of the compaction engine. Each retry is a `model-retry`
   * {@link TurnEvent}.
   */
  readonly retry?: ModelRetry;
  /**
   * How long a request may go without sending a stream part (the wait for
   * the first one included) before it is aborted: the answer is recorded
   * as cut and the request fails with a `NetworkError`
   * (`TransportError`). Timed with the `Clock`; 5 minutes by default.
   */
  readonly idleTimeout?: Duration.Input;
  /**
   * The partial answer: while a request streams, its parts are appended in
   * batches as `assistant/partial` events (log-only), so a crash keeps what
   * streamed and a follower sees it as it comes ({@link PartialOptions}:
   * every 100 ms or 4 KB, whichever comes first); `false` writes none.
   */
  readonly partial?: PartialOptions | false;
  /**
   * A turn or a compaction a crash left open: `close` it first, as
   * `store.repair` records it (the default), or `refuse`
   * ({@link TurnInProgress} or {@link CompactionInProgress}, `live: false`)
   * and write nothing.
   */
  readonly onOpen?: OnOpen;
  /**
   * When a crash left a turn open with an answer cut while it streamed
   * (its `assistant/partial` batches): `"keep"` it for people only (the
   * default), or `"append"` its text and reasoning as an interrupted
   * `assistant/message` before the closers (`store.repair`'s option).
   */
  readonly partialAnswer?: PartialAnswerPolicy;
  /**
   * Told each {@link TurnEvent} as it happens (text as it streams, each
   * tool call, compaction, each step's end, the turn's end); the turn waits
   * for it, so a slow callback slows the turn. {@link streamTurn} gives the
   * same events as a `Stream`.
   */
  readonly onEvent?: (event: TurnEvent) => Effect.Effect<void>;
}

/**
 * The token usage the model reported, summed over the turn's requests
 * (every `streamText` request, retries after an overflow included; not the
 * compaction engine's summary requests). A count no request reported is
 * absent.
 */
export interface TurnUsage {
  /** Input (prompt) tokens. */
  readonly inputTokens?: number;
  /** Output tokens. */
  readonly outputTokens?: number;
  /** Input plus output tokens, of the requests that reported both. */
  readonly totalTokens?: number;
  /** Input tokens read from the provider's cache. */
  readonly cachedInputTokens?: number;
  /** Input tokens written to the provider's cache. */
  readonly cacheWriteTokens?: number;
  /** Output tokens spent on reasoning. */
  readonly reasoningTokens?: number;
}

/**
 * What a turn reports as it runs, in order: `turn-start`; per step
 * `step-start`, the answer's `text-delta` and `reasoning-delta` parts as
 * they stream, `compaction-start` and `compaction-done` or
 * `compaction-refused` (before the request, or after an overflow),
 * `model-retry` before each retry of a request that failed for a passing
 * reason, then `tool-call-start` and `tool-call-end` for each call, and
 * `step-end`; last `turn-end` with the outcome. A turn that fails reports
 * no `turn-end`; one whose overflow could not be recovered reports
 * `overflow-not-recovered` first.
 */
export type TurnEvent =
  | {
    readonly type: "turn-start";
    readonly turn: number;
    /** What was closed first (see {@link TurnOutcome.recovered}). */
    readonly recovered: ReadonlyArray<SessionEvent>;
  }
  | {
    readonly type: "step-start";
    readonly turn: number;
    readonly step: number;
  }
  | {
    readonly type: "text-delta" | "reasoning-delta";
    readonly turn: number;
    readonly step: number;
    /** The part id the model gave. */
    readonly id: string;
    readonly delta: string;
  }
  | {
    readonly type: "compaction-start";
    readonly turn: number;
    readonly step: number;
    readonly forced: boolean;
    readonly compactionId: string;
  }
  | {
    readonly type: "compaction-done" | "compaction-refused";
    readonly turn: number;
    readonly step: number;
    readonly report: CompactionReport;
  }
  | {
    readonly type: "model-retry";
    readonly turn: number;
    readonly step: number;
    /** The step's request, or the compaction engine's summary request. */
    readonly request: "answer" | "summary";
    /** The retry's number in its request: 1 for the first. */
    readonly attempt: number;
    /** The wait before the request is sent again, in milliseconds. */
    readonly delayMillis: number;
    /** The failure retried. */
    readonly error: AiError.AiError;
  }
  | {
    readonly type: "overflow-not-recovered";
    readonly turn: number;
    readonly step: number;
    /** Why the request could not be made small enough. */
    readonly error: OverflowNotRecovered;
  }
  | {
    readonly type: "tool-call-start";
    readonly turn: number;
    readonly step: number;
    readonly callId: string;
    readonly name: string;
    /** The raw JSON arguments. */
    readonly arguments: string;
    /** The seq of the `tool/call`, durable before the tool runs. */
    readonly seq: SessionSeq;
  }
  | {
    readonly type: "tool-call-end";
    readonly turn: number;
    readonly step: number;
    readonly callId: string;
    readonly name: string;
    /** The seq of the `tool/result`. */
    readonly seq: SessionSeq;
    readonly isError: boolean;
    /** The error's name and code, for an error result. */
    readonly error?: { readonly name: string; readonly code: string };
  }
  | {
    readonly type: "step-end";
    readonly turn: number;
    readonly step: number;
    /** The finish reason of the step's answer, when it sent one. */
    readonly finishReason?: Response.FinishReason;
    /** The usage the step's requests reported. */
    readonly usage: TurnUsage;
  }
  | { readonly type: "turn-end"; readonly outcome: TurnOutcome };

/** Why a compaction the turn loop asked for replaced nothing. */
export type CompactionRefusal =
  | CompactionInProgress
  | EmptySummary
  | SummaryNotSmaller
  | CompactionRangeChanged
  | AiError.AiError;

/**
 * One compaction the turn loop needed: the messages were over budget, or
 * a request overflowed.
 */
export interface CompactionReport {
  /** The step it ran in. */
  readonly step: number;
  /** True when an overflow forced it. */
  readonly forced: boolean;
  /** True when a summary replaced a range. */
  readonly compacted: boolean;
  /** The compaction id, when one started. */
  readonly compactionId?: string;
  /** The estimated tokens of the messages before, when it was measured. */
  readonly tokensBefore?: number;
  /** The estimated tokens of the messages after, when it was measured. */
  readonly tokensAfter?: number;
  /**
   * Why nothing was replaced: the engine's refusal or the model's error.
   * Absent with `compacted: false` when no range could be compacted.
   */
  readonly refused?: CompactionRefusal;
}

/**
 * What the pairing pass changed in one request's messages: a result it
 * left out (a late one, whose call a replacement took off the surface; an
 * unknown or duplicate one), a call it left out, a synthetic result for an
 * unanswered call, a result it moved.
 */
export interface RequestRepairs {
  /** The step the request was made in. */
  readonly step: number;
  /** Every repair, as `pairToolCalls` reports it; never empty. */
  readonly repairs: ReadonlyArray<PairingRepair>;
}

/** How a turn went. */
export interface TurnOutcome {
  /** The session after the turn. */
  readonly session: Session;
  /** The turn number. */
  readonly turn: number;
  /** The model requests made that produced a step's answer. */
  readonly steps: number;
  /** The reason `turn/end` records. */
  readonly reason: TurnEndReason["kind"];
  /** Whether the model ended the turn or the step limit did. */
  readonly stoppedBy: "model" | "step-limit";
  /**
   * The closers appended before the turn started, for a turn or a
   * compaction a crash left open (as `store.repair` appends them); empty
   * when nothing was open.
   */
  readonly recovered: ReadonlyArray<SessionEvent>;
  /** Each compaction the turn needed, in order, and how it went. */
  readonly compactions: ReadonlyArray<CompactionReport>;
  /**
   * The requests whose messages the pairing pass had to repair, in order:
   * everything it left out or made up is here; empty for a clean
   * transcript.
   */
  readonly repairs: ReadonlyArray<RequestRepairs>;
  /** The token usage the model reported, summed over the turn's requests. */
  readonly usage: TurnUsage;
}

/**
 * What {@link runTurn} can fail with: the model's error (after its
 * retries), a context overflow compaction could not fix, the store's
 * error, an open turn or compaction it was told not to close, or another
 * turn running on the handle.
 */
export type TurnError =
  | AiError.AiError
  | OverflowNotRecovered
  | AppendError
  | WriteError
  | TurnInProgress
  | CompactionInProgress;
