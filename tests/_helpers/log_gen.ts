/**
 * Generated valid event logs for property tests, and the naive model of the
 * surface they are checked against: a plain array of seqs changed with
 * `indexOf` and `splice`, copied on every step so any old model stays valid.
 *
 * A log is generated as a list of {@link Command}s (which shrink well) that
 * {@link linesFor} turns into raw lines against the model's current state:
 * appends, replaces over random valid ranges citing their nodes, tool
 * results, prunes, system prompt changes, log-only and opaque events.
 *
 * @module
 */
import fc from "fast-check";
import {
  assistant,
  logOnly,
  opaque,
  type Raw,
  replace,
  system,
  text,
  toolCall,
  toolResult,
  type ToolResultOptions,
  turnStart,
  user,
} from "./build.ts";

/** One generated intention, interpreted against the model. */
export type Command =
  | { readonly kind: "user" }
  | {
    readonly kind: "assistant";
    readonly call: boolean;
    readonly empty: boolean;
  }
  | { readonly kind: "result"; readonly pick: number; readonly big: boolean }
  | {
    readonly kind: "replace";
    readonly a: number;
    readonly b: number;
    readonly extra: number;
  }
  | { readonly kind: "prune"; readonly pick: number }
  | { readonly kind: "system"; readonly empty: boolean }
  | { readonly kind: "log"; readonly which: number };

/** A replace of the nodes at two picked places (`extra` picks its sources). */
export const replaceCommandArb: fc.Arbitrary<Command> = fc.record({
  kind: fc.constant("replace" as const),
  a: fc.nat(),
  b: fc.nat(),
  extra: fc.nat(),
});

/** Arbitrary commands, weighted towards a realistic mix. */
export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: "user" as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("assistant" as const),
      call: fc.boolean(),
      empty: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("result" as const),
      pick: fc.nat(),
      big: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: replaceCommandArb },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("prune" as const),
      pick: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("system" as const),
      empty: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("log" as const),
      which: fc.nat(),
    }),
  },
);

/** Where a line goes on the surface, as the model reads it. */
export type StepOp =
  | { readonly kind: "log" }
  | { readonly kind: "append" }
  | { readonly kind: "prepend" }
  | { readonly kind: "replace"; readonly start: number; readonly end: number };

/** A generated line with what the model needs to know about it. */
export interface Step {
  /** The line. */
  readonly raw: Raw;
  /** Its type. */
  readonly type: string;
  /** Its effect on the surface. */
  readonly op: StepOp;
  /** Whether its node derives a message. */
  readonly derives: boolean;
  /** The tool call it opens (an assistant message's call). */
  readonly opens?: string;
  /** The tool call it answers. */
  readonly closes?: string;
  /** How a tool result was built, so a prune can keep every other field. */
  readonly result?: ToolResultOptions;
}

/** The naive surface: plain arrays, never shared with a newer model. */
export interface Model {
  /** The window's first seq. */
  readonly base: number;
  /** The surface, in order. */
  readonly nodes: ReadonlyArray<number>;
  /** The log from the base on. */
  readonly log: ReadonlyArray<Step>;
  /** Tool calls without a result yet. */
  readonly openCalls: ReadonlyArray<string>;
  /** Replacements folded. */
  readonly replacements: number;
  /** Seqs a replacement took off the surface. */
  readonly shadowed: ReadonlyArray<number>;
}

/** The model of an empty log starting at `base`. */
export const emptyModel = (base = 0): Model => ({
  base,
  nodes: [],
  log: [],
  openCalls: [],
  replacements: 0,
  shadowed: [],
});

/** The seq the model expects next. */
export const nextSeqOf = (model: Model): number =>
  model.base + model.log.length;

/** The step at `seq`, if in the window. */
export const stepAt = (model: Model, seq: number): Step | undefined =>
  model.log[seq - model.base];

const typeAt = (model: Model, seq: number): string | undefined =>
  stepAt(model, seq)?.type;

/** Applies one step to the model, returning a new model. */
export const applyStep = (model: Model, step: Step): Model => {
  const seq = nextSeqOf(model);
  const nodes = [...model.nodes];
  let replacements = model.replacements;
  let shadowed = model.shadowed;
  if (step.op.kind === "append") nodes.push(seq);
  if (step.op.kind === "prepend") nodes.unshift(seq);
  if (step.op.kind === "replace") {
    const i = nodes.indexOf(step.op.start);
    const j = nodes.indexOf(step.op.end);
    if (i < 0 || j < i) {
      throw new Error(`Generator bug: invalid range at seq ${seq}`);
    }
    shadowed = [...shadowed, ...nodes.splice(i, j - i + 1, seq)];
    replacements++;
  }
  let openCalls = model.openCalls;
  if (step.opens !== undefined) openCalls = [...openCalls, step.opens];
  if (step.closes !== undefined) {
    openCalls = openCalls.filter((c) => c !== step.closes);
  }
  return {
    base: model.base,
    nodes,
    log: [...model.log, step],
    openCalls,
    replacements,
    shadowed,
  };
};

const surfaceStep = (
  raw: Raw,
  type: string,
  op: StepOp,
  extra?: Partial<Step>,
): Step => ({ raw, type, op, derives: true, ...extra });

const logStep = (raw: Raw): Step => ({
  raw,
  type: String(raw.type),
  op: { kind: "log" },
  derives: false,
});

const appendUser = (seq: number): Step =>
  surfaceStep(user(seq), "user/message", { kind: "append" });

const resultStep = (
  seq: number,
  options: ToolResultOptions,
  op: StepOp,
  closes?: string,
): Step =>
  surfaceStep(toolResult(seq, options), "tool/result", op, {
    result: options,
    ...(closes === undefined ? {} : { closes }),
  });

const pruneOf = (target: Step, seq: number, at: number): Step | undefined => {
  const options = target.result;
  if (options === undefined) return undefined;
  return resultStep(
    seq,
    {
      ...options,
      content: text(`[pruned ${at}]`),
      op: replace(at, at),
      sources: [at],
    },
    { kind: "replace", start: at, end: at },
  );
};

/** The steps a command produces against the model (one or two). */
export const stepsFor = (model: Model, command: Command): Step[] => {
  const seq = nextSeqOf(model);
  const nodes = model.nodes;
  const headIsSystem = nodes.length > 0 &&
    typeAt(model, nodes[0] ?? -1) === "system/message";
  switch (command.kind) {
    case "user":
      return [appendUser(seq)];
    case "assistant": {
      const callId = command.call ? `c${seq}` : undefined;
      const empty = command.empty && !command.call;
      return [
        surfaceStep(
          assistant(seq, {
            ...(callId === undefined ? {} : { callId }),
            empty,
          }),
          "assistant/message",
          { kind: "append" },
          {
            derives: !empty,
            ...(callId === undefined ? {} : { opens: callId }),
          },
        ),
      ];
    }
    case "result": {
      const open = model.openCalls;
      const callId = open.length > 0
        ? (open[command.pick % open.length] ?? `x${seq}`)
        : `x${seq}`;
      const failed = command.pick % 5 === 0;
      const options: ToolResultOptions = {
        callId,
        id: `r${seq}`,
        content: text(command.big ? "x".repeat(200) : `result ${seq}`),
        ...(failed
          ? { isError: true, error: { name: "ToolFailed", code: "E" } }
          : {}),
        ...(command.pick % 3 === 0 ? { meta: { n: command.pick } } : {}),
        ...(seq > 0 ? { sources: [seq - 1] } : {}),
      };
      return [resultStep(seq, options, { kind: "append" }, callId)];
    }
    case "replace": {
      if (nodes.length === 0) return [appendUser(seq)];
      // Mostly short ranges, sometimes a long one.
      let lo = command.a % nodes.length;
      const span = command.b % 4 === 0 ? command.b : command.b % 3;
      const hi = Math.min(nodes.length - 1, lo + span);
      const head = nodes[0] ?? -1;
      if (headIsSystem && lo === 0) {
        if (hi === 0) {
          return [
            surfaceStep(
              system(seq, { op: replace(head, head), sources: [head] }),
              "system/message",
              { kind: "replace", start: head, end: head },
            ),
          ];
        }
        lo = 1;
      }
      // A range ends before a message with an unanswered call.
      const wide = nodes.slice(lo, hi + 1);
      const open = wide.findIndex((n) => {
        const opens = stepAt(model, n)?.opens;
        return opens !== undefined && model.openCalls.includes(opens);
      });
      const range = open < 0 ? wide : wide.slice(0, open);
      const start = range[0];
      const end = range[range.length - 1];
      if (start === undefined || end === undefined) return [appendUser(seq)];
      const op: StepOp = { kind: "replace", start, end };
      if (range.length === 1 && command.extra % 2 === 1) {
        const target = stepAt(model, start);
        const prune = target === undefined
          ? undefined
          : pruneOf(target, seq, start);
        if (prune !== undefined) return [prune];
      }
      const sources = new Set(
        command.extra % 2 === 0 ? [...range].reverse() : range,
      );
      if (command.extra % 3 === 0 && seq > 0) sources.add(seq - 1);
      if (command.extra % 5 === 0 && model.base > 0) {
        sources.add(model.base - 1);
      }
      return [
        surfaceStep(
          user(seq, {
            op: replace(start, end),
            sources: [...sources],
            source: { kind: "plugin", plugin: "compaction" },
            text: `summary of ${range.length}`,
          }),
          "user/message",
          op,
        ),
      ];
    }
    case "prune": {
      const results = nodes.filter((n) => typeAt(model, n) === "tool/result");
      const at = results[command.pick % Math.max(results.length, 1)];
      const target = at === undefined ? undefined : stepAt(model, at);
      if (at === undefined || target === undefined) return [appendUser(seq)];
      const prune = pruneOf(target, seq + 1, at);
      if (prune === undefined) return [appendUser(seq)];
      return [
        logStep(logOnly("compaction/prune", seq, { shadowedSeqs: [at] })),
        prune,
      ];
    }
    case "system": {
      const content = command.empty ? { text: "" } : { text: `prompt ${seq}` };
      if (nodes.length === 0) {
        return [
          surfaceStep(system(seq, content), "system/message", {
            kind: "append",
          }, { derives: !command.empty }),
        ];
      }
      if (headIsSystem) {
        const head = nodes[0] ?? -1;
        return [
          surfaceStep(
            system(seq, {
              ...content,
              op: replace(head, head),
              sources: [head],
            }),
            "system/message",
            { kind: "replace", start: head, end: head },
            { derives: !command.empty },
          ),
        ];
      }
      // A surface without a system head gets one before its head.
      return [
        surfaceStep(
          system(seq, { ...content, op: "prepend" }),
          "system/message",
          { kind: "prepend" },
          { derives: !command.empty },
        ),
      ];
    }
    case "log": {
      switch (command.which % 6) {
        case 0:
          return [logStep(turnStart(seq))];
        case 1:
          return [logStep(toolCall(seq, model.openCalls[0] ?? "none"))];
        case 2:
          return [
            logStep(
              logOnly("compaction/start", seq, { compactionId: "k", turn: 0 }),
            ),
          ];
        case 3:
          return [
            logStep(
              logOnly("request/context", seq, { provider: "p", model: "m" }),
            ),
          ];
        case 4:
          return [logStep(opaque(seq, { surfaceOp: "append" }))];
        default:
          return [logStep(logOnly("step/start", seq, { turn: 0, step: 1 }))];
      }
    }
  }
};

/** A generated log and the model after it. */
export interface GeneratedLog {
  /** The window's first seq. */
  readonly base: number;
  /** The lines, in seq order. */
  readonly lines: ReadonlyArray<Raw>;
  /** The model after each line (index i: after lines[0..i]). */
  readonly models: ReadonlyArray<Model>;
  /** The model after the whole log. */
  readonly model: Model;
}

/** Interprets commands from an empty model at `base`. */
export const buildLog = (
  base: number,
  commands: ReadonlyArray<Command>,
): GeneratedLog => {
  let model = emptyModel(base);
  const lines: Raw[] = [];
  const models: Model[] = [];
  for (const command of commands) {
    for (const step of stepsFor(model, command)) {
      model = applyStep(model, step);
      lines.push(step.raw);
      models.push(model);
    }
  }
  return { base, lines, models, model };
};

/** Arbitrary valid logs, from seq 0 or from a window's base. */
export const logArb = (
  maxLength = 80,
): fc.Arbitrary<GeneratedLog> =>
  fc.record({
    base: fc.constantFrom(0, 0, 0, 7),
    commands: fc.array(commandArb, { maxLength, size: "max" }),
  }).map(({ base, commands }) => buildLog(base, commands));
