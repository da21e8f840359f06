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
 *   when the rollout has them, else a user message after model output opens
 *   a new turn.
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
import {
  type ContentBlock,
  type SessionSeq,
  surfaceEvent,
  surfaceNodes,
  type ToolResultContentBlock,
} from "../../mod.ts";
import {
  append,
  argumentsText,
  assistantMessage,
  type Builder,
  closeAnsweredTurn,
  closeOpenCalls,
  closeTurn,
  compactBefore,
  count,
  done,
  epochOf,
  fileName,
  forgetShadowedCalls,
  importedHeader,
  isRecord,
  keptOpaque,
  notAnObject,
  notCarried,
  openTurn,
  setTime,
  skip,
  type Step,
  str,
  toolResult,
  uniqueId,
  userMessage,
} from "./builder.ts";
import { type ImportError, ImportNotASession } from "./errors.ts";
import { forEachRecord, type RecordReadOptions } from "./lines.ts";
import type { Converted } from "./pi.ts";

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

const messageContent = (u: unknown): ContentBlock[] => {
  if (typeof u === "string") return [{ type: "text", text: u }];
  if (!Array.isArray(u)) return [];
  return u.flatMap((c): ContentBlock[] => {
    if (!isRecord(c)) return [];
    if (typeof c.text === "string") return [{ type: "text", text: c.text }];
    if (c.type === "input_image") {
      return [{ type: "image", attachment: { url: c.image_url ?? null } }];
    }
    return [{ type: "text", text: JSON.stringify(c) }];
  });
};

/** The source of a non-assistant message: the user, or a `codex/<role>` plugin. */
const sourceOf = (
  role: string | undefined,
): { readonly kind: string; readonly plugin?: string } =>
  role === "user"
    ? { kind: "user" }
    : { kind: "plugin", plugin: `codex/${role ?? "unknown"}` };

const outputContent = (u: unknown): ToolResultContentBlock[] => {
  if (typeof u === "string") return [{ type: "text", text: u }];
  if (isRecord(u) && typeof u.content === "string") {
    return [{ type: "text", text: u.content }];
  }
  if (Array.isArray(u)) {
    return u.flatMap((c): ToolResultContentBlock[] =>
      isRecord(c) && typeof c.text === "string"
        ? [{ type: "text", text: c.text }]
        : isRecord(c) && c.type === "input_image"
        ? [{ type: "image", attachment: { url: c.image_url ?? null } }]
        : [{ type: "text", text: JSON.stringify(c) }]
    );
  }
  return [{ type: "text", text: JSON.stringify(u ?? null) }];
};

interface Held {
  readonly p: Record<string, unknown>;
  readonly line: number;
  readonly time: unknown;
  readonly kind: string;
}

/** Texts Codex writes as user messages that the person did not type. */
const contextPrefixes = [
  "<environment_context>",
  "<user_instructions>",
  "# AGENTS.md instructions",
  "<user_shell_command>",
  "<turn_aborted>",
  // The summary of an earlier compaction.
  "Another language model started to solve this problem",
];

/** Whether a user message is one the person typed (what Codex counts as a turn). */
const isRealUserMessage = (
  m: {
    readonly source: { readonly kind: string };
    readonly content: ReadonlyArray<ContentBlock>;
  },
): boolean => {
  if (m.source.kind !== "user") return false;
  const first = m.content.find((c) => c.type === "text");
  const text = first?.type === "text" ? first.text.trimStart() : "";
  return !contextPrefixes.some((prefix) => text.startsWith(prefix));
};

/** Codex's bound on the user messages a compaction without history keeps, in tokens. */
const keptUserTokens = 20_000;

/** Codex's token estimate: four bytes a token. */
const tokensOf = (text: string): number =>
  Math.ceil(new TextEncoder().encode(text).length / 4);

/**
 * A \`compacted\` line without a replacement history, as Codex rebuilds it:
 * the newest messages the person typed, up to about 20k tokens (the one
 * that does not fit whole is cut to the budget), in order, then the summary
 * as a user message; everything else is dropped. The first kept message
 * replaces the surface, the others follow it, each citing the compaction.
 */
const keepRecentUserMessages = (
  b: Builder,
  line: number,
  kind: string,
  compactionId: string,
  summary: string,
): Step => {
  const users: Array<ReadonlyArray<ContentBlock>> = [];
  for (const seq of surfaceNodes(b.surface)) {
    const e = surfaceEvent(b.surface, seq);
    if (e?.type === "user/message" && isRealUserMessage(e.data)) {
      users.push(e.data.content);
    }
  }
  const kept: Array<ReadonlyArray<ContentBlock>> = [];
  let budget = keptUserTokens;
  for (let i = users.length - 1; i >= 0 && budget > 0; i--) {
    const content = users[i] ?? [];
    const text = content.flatMap((c) => c.type === "text" ? [c.text] : [])
      .join("");
    const tokens = tokensOf(text);
    if (tokens <= budget) {
      kept.unshift(content);
      budget -= tokens;
      continue;
    }
    kept.unshift([{ type: "text", text: text.slice(0, budget * 4) }]);
    break;
  }
  const summaryContent: ReadonlyArray<ContentBlock> = [{
    type: "text",
    text: summary,
  }];
  const [first, ...rest] = kept;
  const replaced = compactBefore(b, line, {
    compactionId,
    summary,
    kind,
    content: first ?? summaryContent,
    ...(first === undefined ? {} : {
      source: { kind: "user" },
      messageId: `${compactionId}-user`,
    }),
  });
  if (Result.isFailure(replaced)) return Result.fail(replaced.failure);
  const cited = [replaced.success];
  const tail = first === undefined ? rest : [...rest, summaryContent];
  for (const [i, content] of tail.entries()) {
    const last = first !== undefined && i === tail.length - 1;
    const made = userMessage(
      b,
      line,
      last ? `compaction-${compactionId}` : `${compactionId}-user`,
      content,
      last ? { kind: "plugin", plugin: "compaction" } : { kind: "user" },
      cited,
    );
    if (Result.isFailure(made)) return Result.fail(made.failure);
  }
  notCarried(
    b,
    line,
    kind,
    `a compaction without a replacement history: ${kept.length} user message${
      kept.length === 1 ? "" : "s"
    } and the summary kept, as Codex rebuilds it`,
  );
  return Result.succeed(undefined);
};

/**
 * Imports a Codex rollout into the builder.
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param b The builder.
 * @returns The header and what the reader saw.
 */
export const importCodex = (
  file: string,
  options: RecordReadOptions,
  b: Builder,
): Result.Result<Converted, ImportError> => {
  let meta: Record<string, unknown> | undefined;
  let model = { provider: "openai", model: "unknown" };
  let pending: PendingOutput | undefined;
  let explicitTurns = false;
  let modelOutputInTurn = false;
  let records = 0;
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

  const userSide = (line: number): Step => {
    const flushed = flush();
    if (Result.isFailure(flushed)) return flushed;
    if (cite !== undefined) return Result.succeed(undefined);
    if (b.turn === undefined || (!explicitTurns && modelOutputInTurn)) {
      modelOutputInTurn = false;
      return openTurn(b, line);
    }
    return Result.succeed(undefined);
  };

  const responseItem = (
    p: Record<string, unknown>,
    line: number,
    time: unknown,
    kind: string,
  ): Step => {
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
        const opened = userSide(line);
        if (Result.isFailure(opened)) return opened;
        setTime(b, time);
        const made = userMessage(
          b,
          line,
          str(p.id) ?? `codex-L${line}`,
          messageContent(p.content),
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
      case "function_call": {
        const out = output(line, time);
        if (Result.isFailure(out)) return Result.fail(out.failure);
        out.success.content.push({
          type: "tool-call",
          id: str(p.call_id) ?? "",
          name: str(p.name) ?? "",
          arguments: argumentsText(p.arguments),
        });
        return Result.succeed(undefined);
      }
      case "custom_tool_call": {
        const out = output(line, time);
        if (Result.isFailure(out)) return Result.fail(out.failure);
        out.success.content.push({
          type: "tool-call",
          id: str(p.call_id) ?? "",
          name: str(p.name) ?? "",
          arguments: JSON.stringify(p.input ?? ""),
        });
        return Result.succeed(undefined);
      }
      case "local_shell_call": {
        const out = output(line, time);
        if (Result.isFailure(out)) return Result.fail(out.failure);
        out.success.content.push({
          type: "tool-call",
          id: str(p.call_id) ?? str(p.id) ?? "",
          name: "local_shell",
          arguments: JSON.stringify(p.action ?? {}),
        });
        return Result.succeed(undefined);
      }
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

  const compacted = (
    p: Record<string, unknown>,
    line: number,
    time: unknown,
    kind: string,
  ): Step => {
    const flushed = flush();
    if (Result.isFailure(flushed)) return flushed;
    const settled = settle(line);
    if (Result.isFailure(settled)) return settled;
    setTime(b, time);
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

  const rolledBack = (
    p: Record<string, unknown>,
    line: number,
    time: unknown,
    kind: string,
  ): Step => {
    const flushed = flush();
    if (Result.isFailure(flushed)) return flushed;
    const settled = settle(line);
    if (Result.isFailure(settled)) return settled;
    setTime(b, time);
    const turns = typeof p.num_turns === "number" ? p.num_turns : 0;
    const nodes = surfaceNodes(b.surface);
    const starts = nodes.filter((seq) => {
      const e = surfaceEvent(b.surface, seq);
      return e?.type === "user/message" && isRealUserMessage(e.data);
    });
    const from = starts[Math.max(0, starts.length - turns)];
    const last = nodes[nodes.length - 1];
    if (turns <= 0 || from === undefined || last === undefined) {
      notCarried(b, line, kind, "a rollback with no user turn to drop");
      return Result.succeed(undefined);
    }
    const shadowed = nodes.slice(nodes.indexOf(from));
    const closed = closeTurn(b, line, "interrupted");
    if (Result.isFailure(closed)) return closed;
    const made = append(b, {
      type: "user/message",
      surfaceOp: { op: "replace", startSeq: from, endSeq: last },
      sourceEventSeqs: shadowed,
      data: {
        id: uniqueId(b, `codex-rollback-L${line}`),
        role: "user",
        content: [{ type: "text", text: "" }],
        source: { kind: "plugin", plugin: "codex/rollback" },
      },
    }, line);
    if (Result.isFailure(made)) return Result.fail(made.failure);
    forgetShadowedCalls(b, line, kind);
    notCarried(
      b,
      line,
      kind,
      `the last ${turns} user turn${
        turns === 1 ? "" : "s"
      } (${shadowed.length} surface nodes) replaced by an empty message, as Codex drops them`,
    );
    return Result.succeed(undefined);
  };

  const read = forEachRecord(
    file,
    options,
    (value, line): Result.Result<void, ImportError> => {
      records += 1;
      if (!isRecord(value)) {
        notAnObject(b, line);
        return Result.succeed(undefined);
      }
      const type = str(value.type) ?? "unknown";
      const p = isRecord(value.payload) ? value.payload : {};
      const sub = str(p.type);
      const kind = sub === undefined ? type : `${type}/${sub}`;
      count(b, kind);
      const time = value.timestamp;
      switch (type) {
        case "session_meta": {
          if (meta !== undefined) {
            skip(b, kind, line, "a repeated session header");
            return Result.succeed(undefined);
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
          if (instructions !== undefined) {
            const made = append(b, {
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
            }, line);
            if (Result.isFailure(made)) return Result.fail(made.failure);
          }
          return Result.succeed(undefined);
        }
        case "response_item":
          return responseItem(p, line, time, kind);
        case "compacted":
          return compacted(p, line, time, kind);
        case "turn_context": {
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
          return Result.succeed(undefined);
        }
        case "event_msg": {
          if (sub === "thread_rolled_back") {
            return rolledBack(p, line, time, kind);
          }
          if (sub === "task_started") {
            explicitTurns = true;
            const flushed = flush();
            if (Result.isFailure(flushed)) return flushed;
            const settled = settle(line);
            if (Result.isFailure(settled)) return settled;
            setTime(b, time);
            if (b.turn !== undefined && !modelOutputInTurn) {
              return Result
                .succeed(undefined);
            }
            modelOutputInTurn = false;
            return openTurn(b, line);
          }
          if (sub === "task_complete" || sub === "turn_aborted") {
            const flushed = flush();
            if (Result.isFailure(flushed)) return flushed;
            const settled = settle(line);
            if (Result.isFailure(settled)) return settled;
            setTime(b, time);
            modelOutputInTurn = false;
            return closeTurn(
              b,
              line,
              sub === "task_complete" ? "completed" : "interrupted",
            );
          }
          const reason = sub === undefined ? undefined : echoes[sub];
          skip(b, kind, line, reason ?? "a UI event, not sent to the model");
          return Result.succeed(undefined);
        }
        default:
          notCarried(
            b,
            line,
            kind,
            `line type ${JSON.stringify(type)} is not known to this importer`,
          );
          return Result.succeed(undefined);
      }
    },
  );
  if (Result.isFailure(read)) return Result.fail(read.failure);
  if (records === 0) {
    return Result.fail(
      new ImportNotASession({
        from: "codex",
        line: 1,
        expected: "a JSON record",
      }),
    );
  }
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
