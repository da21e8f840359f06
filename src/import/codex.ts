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
 * - `compacted` with a `replacement_history` of messages is a replacement
 *   of the whole surface by that history (the first message replaces, the
 *   others follow it, each citing the compaction); without one, what it
 *   replaced cannot be proved: its summary is appended and reported.
 * - `turn_context` becomes `request/context` when the model changes; the
 *   `event_msg` echoes of the history (`user_message`, `agent_message`,
 *   `agent_reasoning`) and `token_count` are skipped and counted.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { ContentBlock, ToolResultContentBlock } from "../../mod.ts";
import {
  append,
  argumentsText,
  assistantMessage,
  type Builder,
  closeAnsweredTurn,
  closeTurn,
  compactBefore,
  count,
  done,
  epochOf,
  fileName,
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

  const output = (line: number, time: unknown): PendingOutput => {
    if (pending === undefined) {
      pending = { line, time, content: [], stream: [] };
    }
    return pending;
  };

  const userSide = (line: number): Step => {
    const flushed = flush();
    if (Result.isFailure(flushed)) return flushed;
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
          output(line, time).content.push(...messageContent(p.content));
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
        );
        return done(made);
      }
      case "reasoning": {
        const out = output(line, time);
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
        output(line, time).content.push({
          type: "tool-call",
          id: str(p.call_id) ?? "",
          name: str(p.name) ?? "",
          arguments: argumentsText(p.arguments),
        });
        return Result.succeed(undefined);
      case "custom_tool_call":
        output(line, time).content.push({
          type: "tool-call",
          id: str(p.call_id) ?? "",
          name: str(p.name) ?? "",
          arguments: JSON.stringify(p.input ?? ""),
        });
        return Result.succeed(undefined);
      case "local_shell_call":
        output(line, time).content.push({
          type: "tool-call",
          id: str(p.call_id) ?? str(p.id) ?? "",
          name: "local_shell",
          arguments: JSON.stringify(p.action ?? {}),
        });
        return Result.succeed(undefined);
      case "function_call_output":
      case "custom_tool_call_output":
      case "local_shell_call_output": {
        const flushed = flush();
        if (Result.isFailure(flushed)) return flushed;
        setTime(b, time);
        const failed = isRecord(p.output) && p.output.success === false;
        return toolResult(
          b,
          line,
          kind,
          str(p.call_id) ?? "",
          outputContent(p.output),
          failed,
        );
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
    setTime(b, time);
    const summary = str(p.message) ?? "";
    const history = Array.isArray(p.replacement_history)
      ? p.replacement_history
      : undefined;
    const messages =
      history?.filter((h) => isRecord(h) && h.type === "message") ?? [];
    if (
      history === undefined || history.length === 0 ||
      messages.length !== history.length
    ) {
      notCarried(
        b,
        line,
        kind,
        history === undefined
          ? "compaction without a replacement history: what it replaced cannot be proved, its summary is appended"
          : "compaction whose replacement history holds more than messages; its summary is appended",
      );
      const made = userMessage(b, line, `codex-compacted-L${line}`, [{
        type: "text",
        text: summary,
      }], {
        kind: "plugin",
        plugin: "compaction",
      });
      return done(made);
    }
    const [head, ...rest] = messages;
    const headContent = isRecord(head) ? messageContent(head.content) : [];
    const compactionId = `codex-L${line}`;
    const replaced = compactBefore(b, line, {
      compactionId,
      summary,
      content: headContent,
      kind,
    });
    if (Result.isFailure(replaced)) return Result.fail(replaced.failure);
    const cite = [replaced.success];
    for (const item of rest) {
      if (!isRecord(item)) continue;
      const made = userMessage(
        b,
        line,
        `${compactionId}-history`,
        messageContent(item.content),
        sourceOf(str(item.role)),
        cite,
      );
      if (Result.isFailure(made)) return Result.fail(made.failure);
    }
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
          if (sub === "task_started") {
            explicitTurns = true;
            const flushed = flush();
            if (Result.isFailure(flushed)) return flushed;
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
