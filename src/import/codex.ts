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
 *   `thread_rolled_back` replaces the last N user turns by an empty message.
 * - A message logged while calls wait for their outputs is placed after
 *   them (the transcript stays paired); a call with no output is answered
 *   with Codex's `aborted` right after it. `system` messages and
 *   `ghost_snapshot` are skipped; hosted tool items (`web_search_call`,
 *   `tool_search_*`) are kept opaque in the stream. The deliberate
 *   differences from what Codex sends are listed in `docs/importing.md`.
 * - `turn_context` becomes `request/context` when the model changes; the
 *   `event_msg` echoes of the history (`user_message`, `agent_message`,
 *   `agent_reasoning`) and `token_count` are skipped and counted.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { ContentBlock, ToolCallBlock } from "../message.ts";
import type { SessionSeq } from "../seq.ts";
import {
  append,
  done,
  importedHeader,
  ok,
  setTime,
  type Step,
  uniqueId,
} from "./builder.ts";
import { keptOpaque, notCarried, skip } from "./notes.ts";
import { closeAnsweredTurn, closeTurn, openTurn } from "./turns.ts";
import {
  argumentsText,
  epochOf,
  fileName,
  isRecord,
  str,
  toolCallBlock,
} from "./values.ts";
import { forEachLine, own, type RecordHandler } from "./records.ts";
import { compactBefore } from "./compaction.ts";
import {
  assistantMessage,
  closeOpenCalls,
  toolResult,
  userMessage,
} from "./messages.ts";
import {
  isRealUserMessage,
  keepRecentUserMessages,
  messageContent,
  outputContent,
  rollBack,
  sourceOf,
} from "./codex_items.ts";
import type { Importer } from "./importer.ts";

interface PendingOutput {
  readonly line: number;
  readonly time: unknown;
  readonly content: ContentBlock[];
  readonly stream: unknown[];
}

const echoes: Readonly<Record<string, string>> = {
  user_message: "an echo of a response_item user message",
  agent_message: "an echo of a response_item assistant message",
  agent_reasoning: "an echo of a response_item reasoning summary",
  agent_reasoning_raw_content: "an echo of response_item reasoning",
  token_count: "token accounting, not sent to the model",
};

interface Held {
  readonly p: Record<string, unknown>;
  readonly line: number;
  readonly time: unknown;
  readonly kind: string;
}

/** A step importing a payload `p` read at `line`, stamped `time`. */
type PayloadStep = (
  p: Record<string, unknown>,
  line: number,
  time: unknown,
  kind: string,
) => Step;

/**
 * Imports a Codex rollout into the builder.
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param b The builder.
 * @returns The header and what the reader saw.
 */
export const importCodex: Importer = (file, options, b) => {
  let meta: Record<string, unknown> | undefined;
  let model = { provider: "openai", model: "unknown" };
  let pending: PendingOutput | undefined;
  let explicitTurns = false;
  let modelOutputInTurn = false;
  /** User-side items that arrived while calls waited for their outputs. */
  let held: Array<Held> = [];
  /** Set while a compaction's replacement history is imported: what its messages cite. */
  let cite: ReadonlyArray<SessionSeq> | undefined;
  b.closerText = "aborted";

  const flush = (): Step => {
    if (pending === undefined) return Result.succeed(undefined);
    const p = pending;
    pending = undefined;
    setTime(b, p.time);
    const made = assistantMessage(b, p.line, `codex-L${p.line}`, p.content, {
      provider: model.provider,
      model: model.model,
      stream: p.stream,
    });
    modelOutputInTurn = true;
    return done(made);
  };

  const output = (line: number, time: unknown): Step<PendingOutput> => {
    if (pending === undefined) {
      // A new response: Codex answered the calls still open right after them.
      const settled = settle(line);
      if (Result.isFailure(settled)) return Result.fail(settled.failure);
      pending = { line, time, content: [], stream: [] };
    }
    return Result.succeed(pending);
  };

  /** Adds a tool call to the pending output. */
  const toolCall = (
    line: number,
    time: unknown,
    call: ToolCallBlock,
  ): Step => {
    const out = output(line, time);
    if (Result.isFailure(out)) return Result.fail(out.failure);
    out.success.content.push(call);
    return Result.succeed(undefined);
  };

  /** Imports the items held back while calls were open. */
  const release = (): Step => {
    const items = held;
    held = [];
    for (const h of items) {
      const made = responseItem(h.p, h.line, h.time, h.kind);
      if (Result.isFailure(made)) return made;
    }
    return Result.succeed(undefined);
  };

  /**
   * Answers the open calls as Codex does (a synthetic \`aborted\` output
   * right after the call), then imports what was held back behind them.
   */
  const settle = (line: number): Step => {
    if (b.openCalls.size > 0) {
      const closed = closeOpenCalls(b, line);
      if (Result.isFailure(closed)) return closed;
    }
    return release();
  };

  /**
   * Brings the import up to an event that changes the turn at `line`: emits
   * the pending output, settles the open calls, then sets the clock.
   */
  const boundary = (line: number, time: unknown): Step => {
    const flushed = flush();
    if (Result.isFailure(flushed)) return flushed;
    const settled = settle(line);
    if (Result.isFailure(settled)) return settled;
    setTime(b, time);
    return Result.succeed(undefined);
  };

  /**
   * Opens the turn of a user-side message: with no turn events (Codex
   * 0.58), a message the person typed after model output opens a new one;
   * a developer note or the environment context does not.
   */
  const userSide = (line: number, typed: boolean): Step => {
    const flushed = flush();
    if (Result.isFailure(flushed)) return flushed;
    if (cite !== undefined) return Result.succeed(undefined);
    if (
      b.turn === undefined || (!explicitTurns && modelOutputInTurn && typed)
    ) {
      modelOutputInTurn = false;
      return openTurn(b, line);
    }
    return Result.succeed(undefined);
  };

  const responseItem: PayloadStep = (p, line, time, kind) => {
    switch (p.type) {
      case "message": {
        const role = str(p.role);
        if (role === "assistant") {
          const out = output(line, time);
          if (Result.isFailure(out)) return Result.fail(out.failure);
          out.success.content.push(...messageContent(p.content));
          return Result.succeed(undefined);
        }
        if (role === "system") {
          skip(
            b,
            `${kind}/system`,
            line,
            "a system message, which Codex does not send",
          );
          return Result.succeed(undefined);
        }
        const flushed = flush();
        if (Result.isFailure(flushed)) return flushed;
        if (b.openCalls.size > 0 && cite === undefined) {
          // The transcript answers calls before the next message.
          held.push({ p, line, time, kind });
          return Result.succeed(undefined);
        }
        const content = messageContent(p.content);
        const opened = userSide(
          line,
          isRealUserMessage({ source: sourceOf(role), content }),
        );
        if (Result.isFailure(opened)) return opened;
        setTime(b, time);
        const made = userMessage(
          b,
          line,
          str(p.id) ?? `codex-L${line}`,
          content,
          sourceOf(role),
          cite,
        );
        return done(made);
      }
      case "compaction": {
        const flushed = flush();
        if (Result.isFailure(flushed)) return flushed;
        setTime(b, time);
        notCarried(
          b,
          line,
          kind,
          "an encrypted compaction item: kept as an opaque block that goes back to OpenAI Responses unchanged and is left out for other providers",
        );
        return done(userMessage(
          b,
          line,
          `codex-L${line}-compaction`,
          [{
            type: "text",
            text: "",
            opaque: { api: "openai-responses", item: p },
          } as ContentBlock],
          { kind: "plugin", plugin: "codex/compaction" },
          cite,
        ));
      }
      case "web_search_call":
      case "tool_search_call":
      case "tool_search_output": {
        const out = output(line, time);
        if (Result.isFailure(out)) return Result.fail(out.failure);
        out.success.stream.push(p);
        keptOpaque(
          b,
          kind,
          line,
          "a hosted tool item, in the assistant message's stream; the adapters do not send it back",
        );
        return Result.succeed(undefined);
      }
      case "ghost_snapshot":
        skip(b, kind, line, "undo bookkeeping the model never sees");
        return Result.succeed(undefined);
      case "reasoning": {
        const got = output(line, time);
        if (Result.isFailure(got)) return Result.fail(got.failure);
        const out = got.success;
        const summary = Array.isArray(p.summary)
          ? p.summary.map((s) => isRecord(s) ? str(s.text) ?? "" : "").join(
            "\n\n",
          )
          : "";
        const raw = Array.isArray(p.content)
          ? p.content.map((s) => isRecord(s) ? str(s.text) ?? "" : "").join(
            "\n\n",
          )
          : "";
        const text = raw !== "" ? raw : summary;
        if (text !== "") out.content.push({ type: "reasoning", text });
        if (p.encrypted_content !== undefined && p.encrypted_content !== null) {
          out.stream.push(p);
          keptOpaque(
            b,
            "response_item/reasoning",
            line,
            "encrypted reasoning, in the assistant message's stream",
          );
        }
        return Result.succeed(undefined);
      }
      case "function_call":
        return toolCall(
          line,
          time,
          toolCallBlock(p.call_id, p.name, argumentsText(p.arguments)),
        );
      case "custom_tool_call":
        return toolCall(
          line,
          time,
          toolCallBlock(p.call_id, p.name, JSON.stringify(p.input ?? "")),
        );
      case "local_shell_call":
        return toolCall(
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
        const flushed = flush();
        if (Result.isFailure(flushed)) return flushed;
        setTime(b, time);
        const failed = isRecord(p.output) && p.output.success === false;
        const answered = toolResult(
          b,
          line,
          kind,
          str(p.call_id) ?? "",
          outputContent(p.output),
          failed,
        );
        if (Result.isFailure(answered)) return answered;
        return b.openCalls.size === 0 ? release() : answered;
      }
      default: {
        const flushed = flush();
        if (Result.isFailure(flushed)) return flushed;
        notCarried(
          b,
          line,
          kind,
          `response item of type ${
            JSON.stringify(p.type)
          } has no v3 counterpart`,
        );
        return Result.succeed(undefined);
      }
    }
  };

  const compacted: PayloadStep = (p, line, time, kind) => {
    const reached = boundary(line, time);
    if (Result.isFailure(reached)) return reached;
    const summary = str(p.message) ?? "";
    const compactionId = `codex-L${line}`;
    if (!Array.isArray(p.replacement_history)) {
      return keepRecentUserMessages(b, line, kind, compactionId, summary);
    }
    // Codex goes on from exactly these items: they replace the surface.
    const history = p.replacement_history.filter(isRecord);
    const head = history[0];
    const headRole = head?.type === "message" ? str(head.role) : undefined;
    const replacesWithHead = headRole !== undefined &&
      headRole !== "assistant" && headRole !== "system";
    const replaced = compactBefore(b, line, {
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
        b,
        line,
        kind,
        "a replacement history that does not start with a user message: its summary message replaces the surface before it",
      );
    }
    cite = [replaced.success];
    try {
      for (const item of replacesWithHead ? history.slice(1) : history) {
        const made = responseItem(
          item,
          line,
          time,
          `${kind}/${str(item.type) ?? "unknown"}`,
        );
        if (Result.isFailure(made)) return made;
      }
      return flush();
    } finally {
      cite = undefined;
    }
  };

  const rolledBack: PayloadStep = (p, line, time, kind) => {
    const reached = boundary(line, time);
    if (Result.isFailure(reached)) return reached;
    return rollBack(b, line, kind, p.num_turns);
  };

  const sessionMeta: PayloadStep = (p, line, time, kind) => {
    if (meta !== undefined) {
      skip(b, kind, line, "a repeated session header");
      return ok;
    }
    meta = p;
    setTime(b, p.timestamp ?? time);
    if (typeof p.model_provider === "string") {
      model = {
        ...model,
        provider: p.model_provider,
      };
    }
    const instructions = isRecord(p.base_instructions)
      ? str(p.base_instructions.text)
      : str(p.instructions);
    if (instructions === undefined) return ok;
    return done(append(b, {
      type: "system/message",
      surfaceOp: "append",
      data: {
        turn: 0,
        step: 0,
        message: {
          id: uniqueId(b, "codex-instructions"),
          role: "system",
          content: [{ type: "text", text: instructions }],
          source: { kind: "plugin", plugin: "codex" },
        },
      },
    }, line));
  };

  const turnContext: PayloadStep = (p, line, time, kind) => {
    const next = str(p.model);
    if (next !== undefined && next !== model.model) {
      model = { ...model, model: next };
      setTime(b, time);
      const made = append(b, {
        type: "request/context",
        data: { provider: model.provider, model: next },
      }, line);
      return done(made);
    }
    skip(b, kind, line, "the turn's settings, unchanged");
    return ok;
  };

  const eventMsg: PayloadStep = (p, line, time, kind) => {
    const sub = str(p.type);
    if (sub === "thread_rolled_back") {
      return rolledBack(p, line, time, kind);
    }
    if (sub === "task_started") {
      explicitTurns = true;
      const reached = boundary(line, time);
      if (Result.isFailure(reached)) return reached;
      if (b.turn !== undefined && !modelOutputInTurn) return ok;
      modelOutputInTurn = false;
      return openTurn(b, line);
    }
    if (sub === "task_complete" || sub === "turn_aborted") {
      const reached = boundary(line, time);
      if (Result.isFailure(reached)) return reached;
      modelOutputInTurn = false;
      return closeTurn(
        b,
        line,
        sub === "task_complete" ? "completed" : "interrupted",
      );
    }
    const reason = sub === undefined ? undefined : own(echoes, sub);
    skip(b, kind, line, reason ?? "a UI event, not sent to the model");
    return ok;
  };

  /** A line's payload step as the handler of its type. */
  const payload = (step: PayloadStep): RecordHandler => (value, line, kind) =>
    step(
      isRecord(value.payload) ? value.payload : {},
      line,
      value.timestamp,
      kind,
    );

  const read = forEachLine(b, "codex", file, options, {
    what: "line type",
    kindOf: (value) => {
      const type = str(value.type) ?? "unknown";
      const sub = isRecord(value.payload) ? str(value.payload.type) : undefined;
      return { type, kind: sub === undefined ? type : `${type}/${sub}` };
    },
    handlers: {
      session_meta: payload(sessionMeta),
      response_item: payload(responseItem),
      compacted: payload(compacted),
      turn_context: payload(turnContext),
      event_msg: payload(eventMsg),
    },
  });
  if (Result.isFailure(read)) return Result.fail(read.failure);
  const flushed = flush();
  if (Result.isFailure(flushed)) return Result.fail(flushed.failure);
  if (held.length > 0) {
    // Messages wait behind open calls: answer them as Codex would.
    const settled = settle(0);
    if (Result.isFailure(settled)) return Result.fail(settled.failure);
  }
  if (!explicitTurns) {
    const closed = closeAnsweredTurn(b);
    if (Result.isFailure(closed)) return Result.fail(closed.failure);
  }
  const m = meta ?? {};
  return Result.succeed({
    header: importedHeader(file, str(m.id), epochOf(m.timestamp), {
      tool: "codex",
      file: fileName(file),
      ...(m.id === undefined ? {} : { id: m.id }),
      ...(m.cli_version === undefined ? {} : { version: m.cli_version }),
      ...(m.cwd === undefined ? {} : { cwd: m.cwd }),
      ...(m.git === undefined ? {} : { git: m.git }),
    }),
    ...(typeof m.cli_version === "string"
      ? { formatVersion: m.cli_version }
      : {}),
    read: read.success,
  });
};
