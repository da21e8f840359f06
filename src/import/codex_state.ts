/**
 * The state of a Codex import ({@link CodexState}) and the steps that only
 * read the session's settings: the `session_meta` header, `turn_context`,
 * and the header handed back at the end. The steps over the history are in
 * `codex.ts`.
 *
 * @module
 * @internal
 */
import type { ContentBlock } from "../core/message.ts";
import type { SessionSeq } from "../core/seq.ts";
import {
  append,
  type Builder,
  type Converted,
  done,
  epochOf,
  fileName,
  importedHeader,
  isRecord,
  ok,
  type RecordReadSummary,
  setTime,
  skip,
  type Step,
  str,
  uniqueId,
} from "./kit.ts";

/** The assistant message being gathered from consecutive output items. */
export interface PendingOutput {
  readonly line: number;
  readonly time: unknown;
  readonly content: ContentBlock[];
  readonly stream: unknown[];
}

/** A user-side item held back behind open calls. */
export interface Held {
  readonly p: Record<string, unknown>;
  readonly line: number;
  readonly time: unknown;
  readonly kind: string;
}

/** A step importing a payload `p` read at `line`, stamped `time`. */
export type PayloadStep = (
  s: CodexState,
  p: Record<string, unknown>,
  line: number,
  time: unknown,
  kind: string,
) => Step;

/**
 * What a Codex import knows besides the builder: the steps below read and
 * change it, one record at a time.
 */
export interface CodexState {
  /** The log being built. */
  readonly b: Builder;
  /** The `session_meta` payload, once read. */
  meta: Record<string, unknown> | undefined;
  /** The provider and model of the next assistant message. */
  model: { provider: string; model: string };
  /** The assistant message being gathered from consecutive output items. */
  pending: PendingOutput | undefined;
  /** True once the rollout has `task_started` events (turns are explicit). */
  explicitTurns: boolean;
  /** True once the open turn has model output. */
  modelOutputInTurn: boolean;
  /** User-side items that arrived while calls waited for their outputs. */
  held: Held[];
  /** Set while a compaction's replacement history is imported: what its messages cite. */
  cite: ReadonlyArray<SessionSeq> | undefined;
}

/**
 * The state of a Codex import that has read nothing yet.
 *
 * @param b The builder.
 * @returns The state.
 */
export const codexState = (b: Builder): CodexState => ({
  b,
  meta: undefined,
  model: { provider: "openai", model: "unknown" },
  pending: undefined,
  explicitTurns: false,
  modelOutputInTurn: false,
  held: [],
  cite: undefined,
});

/** The `session_meta` line: the header, and the instructions as the system head. */
export const sessionMeta: PayloadStep = (s, p, line, time, kind) => {
  if (s.meta !== undefined) {
    skip(s.b, kind, line, "a repeated session header");
    return ok;
  }
  s.meta = p;
  setTime(s.b, p.timestamp ?? time);
  if (typeof p.model_provider === "string") {
    s.model = {
      ...s.model,
      provider: p.model_provider,
    };
  }
  const instructions = isRecord(p.base_instructions)
    ? str(p.base_instructions.text)
    : str(p.instructions);
  if (instructions === undefined) return ok;
  return done(append(s.b, {
    type: "system/message",
    surfaceOp: "append",
    data: {
      turn: 0,
      step: 0,
      message: {
        id: uniqueId(s.b, "codex-instructions"),
        role: "system",
        content: [{ type: "text", text: instructions }],
        source: { kind: "plugin", plugin: "codex" },
      },
    },
  }, line));
};

/** A `turn_context` line: `request/context` when the model changes. */
export const turnContext: PayloadStep = (s, p, line, time, kind) => {
  const next = str(p.model);
  if (next !== undefined && next !== s.model.model) {
    s.model = { ...s.model, model: next };
    setTime(s.b, time);
    const made = append(s.b, {
      type: "request/context",
      data: { provider: s.model.provider, model: next },
    }, line);
    return done(made);
  }
  skip(s.b, kind, line, "the turn's settings, unchanged");
  return ok;
};

/**
 * The header and format version of an imported rollout, from its
 * `session_meta`.
 *
 * @param s The import's state.
 * @param file The path.
 * @param read What the line reader saw.
 * @returns What the importer hands back.
 */
export const codexConverted = (
  s: CodexState,
  file: string,
  read: RecordReadSummary,
): Converted => {
  const m = s.meta ?? {};
  return {
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
    read,
  };
};
