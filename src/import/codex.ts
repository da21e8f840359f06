/**
 * Codex rollout files (`~/.codex/sessions/.../rollout-*.jsonl`) to v3 events.
 *
 * - `session_meta` gives the header; its `base_instructions` become the
 *   `system/message` head.
 * - `response_item`s are the model's history. Consecutive output items
 *   (`reasoning`, assistant `message`, `function_call`, `custom_tool_call`,
 *   `local_shell_call`) form one `assistant/message`, one step.
 *   `function_call_output` and `custom_tool_call_output` are paired with
 *   their call by `call_id`. A custom tool's free-form input is kept as a
 *   JSON string literal (the `arguments` of a `tool-call` are JSON text).
 *   Reasoning summaries become `reasoning` blocks; the encrypted reasoning
 *   is kept opaque in the message's `stream`, never dropped. `developer`
 *   messages are user messages from the `codex/developer` plugin.
 * - Turns come from `task_started` / `task_complete` / `turn_aborted` events
 *   when the rollout has them, else (Codex 0.58) a message the person typed
 *   after model output opens a new turn.
 * - `compacted` with a `replacement_history`: those items replace the
 *   surface (the first message replaces and cites it, the others follow,
 *   roles kept); the encrypted `compaction` item is an opaque text block
 *   only `toOpenAIResponses` sends. Without one, the newest typed user
 *   messages (about 20k tokens) and the summary are kept, as Codex does.
 *   `thread_rolled_back` takes the last N user turns off by a rewind (they
 *   stay in the log as a branch), carried by an empty message.
 * - A message logged while calls wait for their outputs is placed after
 *   them (the transcript stays paired); a call with no output is answered
 *   with Codex's `aborted` right after it. `system` messages and
 *   `ghost_snapshot` are skipped; hosted tool items (`web_search_call`,
 *   `tool_search_*`) are kept opaque in the stream. The deliberate
 *   differences from what Codex sends are listed in `docs/importing.md`.
 * - `turn_context` becomes `request/context` when the model changes; the
 *   `event_msg` echoes of the history (`user_message`, `agent_message`,
 *   `agent_reasoning`, `item_completed`), `token_count` and
 *   `thread_settings_applied` are skipped and counted, as are `world_state`
 *   (the environment, which Codex renders into its context messages) and
 *   `token_usage_record`.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { ContentBlock, ToolCallBlock } from "../core/message.ts";
import {
  argumentsText,
  assistantMessage,
  closeAnsweredTurn,
  closeOpenCalls,
  closeTurn,
  compactBefore,
  done,
  type Importer,
  isRecord,
  keptOpaque,
  lineImporter,
  notCarried,
  ok,
  openTurn,
  own,
  type RecordHandler,
  type RecordTable,
  setTime,
  skip,
  skipping,
  type Step,
  str,
  toolCallBlock,
  toolResult,
  userMessage,
} from "./kit.ts";
import {
  isRealUserMessage,
  keepRecentUserMessages,
  messageContent,
  outputContent,
  rollBack,
  sourceOf,
} from "./codex_items.ts";
import {
  codexConverted,
  type CodexState,
  codexState,
  type PayloadStep,
  type PendingOutput,
  sessionMeta,
  turnContext,
} from "./codex_state.ts";

const echoes: Readonly<Record<string, string>> = {
  user_message: "an echo of a response_item user message",
  agent_message: "an echo of a response_item assistant message",
  agent_reasoning: "an echo of a response_item reasoning summary",
  agent_reasoning_raw_content: "an echo of response_item reasoning",
  token_count: "token accounting, not sent to the model",
  item_completed:
    "an echo of a finished item (message, command, tool call) whose response_item is the history",
  thread_settings_applied:
    "the thread's settings as applied (model, approvals, sandbox); a model change is taken from turn_context",
};

/** Emits the pending output as one assistant message, if there is one. */
export const flush = (s: CodexState): Step => {
  if (s.pending === undefined) return Result.succeed(undefined);
  const p = s.pending;
  s.pending = undefined;
  setTime(s.b, p.time);
  const made = assistantMessage(s.b, p.line, `codex-L${p.line}`, p.content, {
    provider: s.model.provider,
    model: s.model.model,
    stream: p.stream,
  });
  s.modelOutputInTurn = true;
  return done(made);
};

/** The pending output, begun at `line` when there is none (after settling the open calls). */
export const output = (
  s: CodexState,
  line: number,
  time: unknown,
): Step<PendingOutput> => {
  if (s.pending === undefined) {
    // A new response: Codex answered the calls still open right after them.
    const settled = settle(s, line);
    if (Result.isFailure(settled)) return Result.fail(settled.failure);
    s.pending = { line, time, content: [], stream: [] };
  }
  return Result.succeed(s.pending);
};

/** Adds a tool call to the pending output. */
export const toolCall = (
  s: CodexState,
  line: number,
  time: unknown,
  call: ToolCallBlock,
): Step => {
  const out = output(s, line, time);
  if (Result.isFailure(out)) return Result.fail(out.failure);
  out.success.content.push(call);
  return Result.succeed(undefined);
};

/** Imports the items held back while calls were open. */
export const release = (s: CodexState): Step => {
  const items = s.held;
  s.held = [];
  for (const h of items) {
    const made = responseItem(s, h.p, h.line, h.time, h.kind);
    if (Result.isFailure(made)) return made;
  }
  return Result.succeed(undefined);
};

/**
 * Answers the open calls as Codex does (a synthetic \`aborted\` output
 * right after the call), then imports what was held back behind them.
 */
export const settle = (s: CodexState, line: number): Step => {
  if (s.b.openCalls.size > 0) {
    const closed = closeOpenCalls(s.b, line);
    if (Result.isFailure(closed)) return closed;
  }
  return release(s);
};

/**
 * Brings the import up to an event that changes the turn at `line`: emits
 * the pending output, settles the open calls, then sets the clock.
 */
export const boundary = (s: CodexState, line: number, time: unknown): Step => {
  const flushed = flush(s);
  if (Result.isFailure(flushed)) return flushed;
  const settled = settle(s, line);
  if (Result.isFailure(settled)) return settled;
  setTime(s.b, time);
  return Result.succeed(undefined);
};

/**
 * Opens the turn of a user-side message: with no turn events (Codex
 * 0.58), a message the person typed after model output opens a new one;
 * a developer note or the environment context does not.
 */
export const userSide = (s: CodexState, line: number, typed: boolean): Step => {
  const flushed = flush(s);
  if (Result.isFailure(flushed)) return flushed;
  if (s.cite !== undefined) return Result.succeed(undefined);
  if (
    s.b.turn === undefined || (!s.explicitTurns && s.modelOutputInTurn && typed)
  ) {
    s.modelOutputInTurn = false;
    return openTurn(s.b, line);
  }
  return Result.succeed(undefined);
};

/** A `response_item`: one item of the model's history. */
export const responseItem: PayloadStep = (s, p, line, time, kind) => {
  switch (p.type) {
    case "message": {
      const role = str(p.role);
      if (role === "assistant") {
        const out = output(s, line, time);
        if (Result.isFailure(out)) return Result.fail(out.failure);
        out.success.content.push(...messageContent(p.content));
        return Result.succeed(undefined);
      }
      if (role === "system") {
        skip(
          s.b,
          `${kind}/system`,
          line,
          "a system message, which Codex does not send",
        );
        return Result.succeed(undefined);
      }
      const flushed = flush(s);
      if (Result.isFailure(flushed)) return flushed;
      if (s.b.openCalls.size > 0 && s.cite === undefined) {
        // The transcript answers calls before the next message.
        s.held.push({ p, line, time, kind });
        return Result.succeed(undefined);
      }
      const content = messageContent(p.content);
      const opened = userSide(
        s,
        line,
        isRealUserMessage({ source: sourceOf(role), content }),
      );
      if (Result.isFailure(opened)) return opened;
      setTime(s.b, time);
      const made = userMessage(
        s.b,
        line,
        str(p.id) ?? `codex-L${line}`,
        content,
        sourceOf(role),
        s.cite,
      );
      return done(made);
    }
    case "compaction": {
      const flushed = flush(s);
      if (Result.isFailure(flushed)) return flushed;
      setTime(s.b, time);
      notCarried(
        s.b,
        line,
        kind,
        "an encrypted compaction item: kept as an opaque block that goes back to OpenAI Responses unchanged and is left out for other providers",
      );
      return done(userMessage(
        s.b,
        line,
        `codex-L${line}-compaction`,
        [{
          type: "text",
          text: "",
          opaque: { api: "openai-responses", item: p },
        } as ContentBlock],
        { kind: "plugin", plugin: "codex/compaction" },
        s.cite,
      ));
    }
    case "web_search_call":
    case "tool_search_call":
    case "tool_search_output": {
      const out = output(s, line, time);
      if (Result.isFailure(out)) return Result.fail(out.failure);
      out.success.stream.push(p);
      keptOpaque(
        s.b,
        kind,
        line,
        "a hosted tool item, in the assistant message's stream; the adapters do not send it back",
      );
      return Result.succeed(undefined);
    }
    case "ghost_snapshot":
      skip(s.b, kind, line, "undo bookkeeping the model never sees");
      return Result.succeed(undefined);
    case "reasoning": {
      const got = output(s, line, time);
      if (Result.isFailure(got)) return Result.fail(got.failure);
      const out = got.success;
      const summary = Array.isArray(p.summary)
        ? p.summary.map((part) => isRecord(part) ? str(part.text) ?? "" : "")
          .join(
            "\n\n",
          )
        : "";
      const raw = Array.isArray(p.content)
        ? p.content.map((part) => isRecord(part) ? str(part.text) ?? "" : "")
          .join(
            "\n\n",
          )
        : "";
      const text = raw !== "" ? raw : summary;
      if (text !== "") out.content.push({ type: "reasoning", text });
      if (p.encrypted_content !== undefined && p.encrypted_content !== null) {
        out.stream.push(p);
        keptOpaque(
          s.b,
          "response_item/reasoning",
          line,
          "encrypted reasoning, in the assistant message's stream",
        );
      }
      return Result.succeed(undefined);
    }
    case "function_call":
      return toolCall(
        s,
        line,
        time,
        toolCallBlock(p.call_id, p.name, argumentsText(p.arguments)),
      );
    case "custom_tool_call":
      return toolCall(
        s,
        line,
        time,
        toolCallBlock(p.call_id, p.name, JSON.stringify(p.input ?? "")),
      );
    case "local_shell_call":
      return toolCall(
        s,
        line,
        time,
        toolCallBlock(
          str(p.call_id) ?? p.id,
          "local_shell",
          JSON.stringify(p.action ?? {}),
        ),
      );
    case "function_call_output":
    case "custom_tool_call_output":
    case "local_shell_call_output": {
      const flushed = flush(s);
      if (Result.isFailure(flushed)) return flushed;
      setTime(s.b, time);
      const failed = isRecord(p.output) && p.output.success === false;
      const answered = toolResult(
        s.b,
        line,
        kind,
        str(p.call_id) ?? "",
        outputContent(p.output),
        failed,
      );
      if (Result.isFailure(answered)) return answered;
      return s.b.openCalls.size === 0 ? release(s) : answered;
    }
    default: {
      const flushed = flush(s);
      if (Result.isFailure(flushed)) return flushed;
      notCarried(
        s.b,
        line,
        kind,
        `response item of type ${JSON.stringify(p.type)} has no v3 counterpart`,
      );
      return Result.succeed(undefined);
    }
  }
};

/**
 * A `compacted` line: its replacement history replaces the surface, or
 * without one the newest typed user messages and the summary are kept.
 */
export const compacted: PayloadStep = (s, p, line, time, kind) => {
  const reached = boundary(s, line, time);
  if (Result.isFailure(reached)) return reached;
  const summary = str(p.message) ?? "";
  const compactionId = `codex-L${line}`;
  if (!Array.isArray(p.replacement_history)) {
    return keepRecentUserMessages(s.b, line, kind, compactionId, summary);
  }
  // Codex goes on from exactly these items: they replace the surface.
  const history = p.replacement_history.filter(isRecord);
  const head = history[0];
  const headRole = head?.type === "message" ? str(head.role) : undefined;
  const replacesWithHead = headRole !== undefined &&
    headRole !== "assistant" && headRole !== "system";
  const replaced = compactBefore(s.b, line, {
    compactionId,
    summary,
    kind,
    ...(replacesWithHead && head !== undefined
      ? {
        content: messageContent(head.content),
        source: sourceOf(headRole),
        messageId: str(head.id) ?? `${compactionId}-history`,
      }
      : {}),
  });
  if (Result.isFailure(replaced)) return Result.fail(replaced.failure);
  if (!replacesWithHead && history.length > 0) {
    notCarried(
      s.b,
      line,
      kind,
      "a replacement history that does not start with a user message: its summary message replaces the surface before it",
    );
  }
  s.cite = [replaced.success];
  try {
    for (const item of replacesWithHead ? history.slice(1) : history) {
      const made = responseItem(
        s,
        item,
        line,
        time,
        `${kind}/${str(item.type) ?? "unknown"}`,
      );
      if (Result.isFailure(made)) return made;
    }
    return flush(s);
  } finally {
    s.cite = undefined;
  }
};

/** A `thread_rolled_back` event: the last user turns taken off by a rewind. */
export const rolledBack: PayloadStep = (s, p, line, time, kind) => {
  const reached = boundary(s, line, time);
  if (Result.isFailure(reached)) return reached;
  return rollBack(s.b, line, kind, p.num_turns);
};

/** An `event_msg` line: turn events, a rollback, or an echo skipped. */
export const eventMsg: PayloadStep = (s, p, line, time, kind) => {
  const sub = str(p.type);
  if (sub === "thread_rolled_back") {
    return rolledBack(s, p, line, time, kind);
  }
  if (sub === "task_started") {
    s.explicitTurns = true;
    const reached = boundary(s, line, time);
    if (Result.isFailure(reached)) return reached;
    if (s.b.turn !== undefined && !s.modelOutputInTurn) return ok;
    s.modelOutputInTurn = false;
    return openTurn(s.b, line);
  }
  if (sub === "task_complete" || sub === "turn_aborted") {
    const reached = boundary(s, line, time);
    if (Result.isFailure(reached)) return reached;
    s.modelOutputInTurn = false;
    return closeTurn(
      s.b,
      line,
      sub === "task_complete" ? "completed" : "interrupted",
    );
  }
  const reason = sub === undefined ? undefined : own(echoes, sub);
  skip(s.b, kind, line, reason ?? "a UI event, not sent to the model");
  return ok;
};

/** A line's payload step as the handler of its type. */
const payload =
  (s: CodexState, step: PayloadStep): RecordHandler => (value, line, kind) =>
    step(
      s,
      isRecord(value.payload) ? value.payload : {},
      line,
      value.timestamp,
      kind,
    );

/**
 * How a rollout's lines are told apart and handled: by `type`, each with
 * its payload step.
 *
 * @param s The import's state.
 * @returns The table.
 */
export const codexLines = (s: CodexState): RecordTable => ({
  what: "line type",
  kindOf: (value) => {
    const type = str(value.type) ?? "unknown";
    const sub = isRecord(value.payload) ? str(value.payload.type) : undefined;
    return { type, kind: sub === undefined ? type : `${type}/${sub}` };
  },
  handlers: {
    session_meta: payload(s, sessionMeta),
    response_item: payload(s, responseItem),
    compacted: payload(s, compacted),
    turn_context: payload(s, turnContext),
    event_msg: payload(s, eventMsg),
    world_state: skipping(
      s.b,
      "the environment Codex renders into its context messages, which are response_items",
    ),
    token_usage_record: skipping(
      s.b,
      "token accounting, not sent to the model",
    ),
  },
});

/**
 * Ends the import once every line is read: emits the pending output,
 * answers the calls messages still wait behind, and closes a turn its
 * answer completed when the rollout has no turn events.
 *
 * @param s The import's state.
 * @returns Nothing, or the refusal.
 */
export const endCodex = (s: CodexState): Step => {
  const flushed = flush(s);
  if (Result.isFailure(flushed)) return flushed;
  if (s.held.length > 0) {
    // Messages wait behind open calls: answer them as Codex would.
    const settled = settle(s, 0);
    if (Result.isFailure(settled)) return settled;
  }
  return s.explicitTurns ? ok : closeAnsweredTurn(s.b);
};

/**
 * Imports a Codex rollout into the builder.
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param b The builder.
 * @returns The header and what the reader saw.
 */
export const importCodex: Importer = lineImporter({
  from: "codex",
  closerText: "aborted",
  state: codexState,
  lines: codexLines,
  end: endCodex,
  converted: codexConverted,
});
