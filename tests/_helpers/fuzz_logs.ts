/**
 * Generators of session logs for the fuzz tests: random valid v3 logs (as
 * plain JSON values, one per event) and single mutations of one event.
 *
 * Validity is decided with the reference checker's own state (which nodes
 * are on the surface), never with the library's: a generator bug then shows
 * up as a disagreement, not as a shared blind spot.
 *
 * @module
 */
import type { Rng } from "./fuzz.ts";
import {
  type CheckerState,
  checkerState,
  checkRelational,
  judgeRewind,
  TURN_END_REASONS,
} from "./reference_checker.ts";

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** A generated log: its window base and its events as JSON values. */
export interface GenLog {
  /** The seq of the first event (0, or a window base). */
  readonly base: number;
  /** The events, as plain JSON values, in seq order. */
  readonly events: Obj[];
}

const isObj = (v: unknown): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A deep copy of a JSON value (the generated values are shallow enough). */
export const clone = <T>(value: T): T => structuredClone(value);

const ALPHABET = [
  "a",
  "b",
  "z",
  " ",
  "\n",
  '"',
  "\\",
  "é",
  "ß",
  "中",
  "😀",
  "\u2028",
  "\u0000",
  "\t",
  "{",
  "}",
  "\ud800",
  "\udfff",
];

/** A short random string with awkward characters. */
export const text = (rng: Rng, max = 12): string => {
  let out = "";
  const n = rng.int(0, max);
  for (let i = 0; i < n; i++) out += rng.pick(ALPHABET);
  return out;
};

/** A random JSON value of bounded size. */
export const jsonValue = (rng: Rng, depth = 3): unknown => {
  const k = rng.int(0, depth <= 0 ? 4 : 7);
  switch (k) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1.5, 2 ** 53 - 1, -(2 ** 31), 1e-7, 42]);
    case 3:
      return text(rng);
    case 4:
      return rng.int(0, 1000);
    case 5:
    case 6: {
      const out: unknown[] = [];
      const n = rng.int(0, 3);
      for (let i = 0; i < n; i++) out.push(jsonValue(rng, depth - 1));
      return out;
    }
    default: {
      const out: Obj = {};
      const n = rng.int(0, 3);
      for (let i = 0; i < n; i++) {
        out[rng.pick(["k", "id", "type", text(rng, 3)])] = jsonValue(
          rng,
          depth - 1,
        );
      }
      return out;
    }
  }
};

const textBlocks = (rng: Rng): Obj[] => {
  const out: Obj[] = [];
  const n = rng.int(0, 2);
  for (let i = 0; i < n; i++) {
    const kind = rng.int(0, 5);
    if (kind <= 2) out.push({ type: "text", text: text(rng) });
    else if (kind === 3) out.push({ type: "reasoning", text: text(rng) });
    else if (kind === 4) {
      out.push({ type: "image", attachment: { path: text(rng, 4) } });
    } else out.push({ type: "file", attachment: text(rng, 4) });
  }
  return out;
};

const innerToolContent = (rng: Rng): Obj[] => {
  const out: Obj[] = [];
  const n = rng.int(0, 2);
  for (let i = 0; i < n; i++) {
    out.push(
      rng.chance(0.8)
        ? { type: "text", text: text(rng, 30) }
        : { type: "image", attachment: jsonValue(rng, 1) },
    );
  }
  return out;
};

/** Generator state: the checker's surface plus ids in flight. */
interface GenState {
  readonly rng: Rng;
  readonly surface: CheckerState;
  readonly events: Obj[];
  readonly openCalls: string[];
  turn: number;
  step: number;
  ids: number;
}

const nextId = (g: GenState, prefix: string): string => `${prefix}${g.ids++}`;

const envelope = (g: GenState, type: string, data: unknown): Obj => ({
  type,
  seq: g.surface.next,
  time: 1_700_000_000_000 + g.surface.next * 7,
  data,
});

const systemData = (g: GenState): Obj => ({
  turn: g.turn,
  step: g.step,
  message: {
    id: nextId(g, "s"),
    role: "system",
    content: g.rng.chance(0.3)
      ? []
      : [{ type: "text", text: `prompt ${text(g.rng)}` }],
    source: { kind: "plugin", plugin: "prompt" },
  },
});

const userData = (g: GenState, plugin: boolean): Obj => ({
  id: nextId(g, "u"),
  role: "user",
  content: textBlocks(g.rng),
  source: plugin
    ? { kind: "plugin", plugin: "compaction" }
    : g.rng.chance(0.9)
    ? { kind: "user" }
    : { kind: "harness", extra: jsonValue(g.rng, 1) },
});

const assistantData = (g: GenState): Obj => {
  const content = textBlocks(g.rng);
  const calls = g.rng.int(0, 2);
  for (let i = 0; i < calls; i++) {
    const id = nextId(g, "call");
    g.openCalls.push(id);
    content.push({
      type: "tool-call",
      id,
      name: "read",
      arguments: JSON.stringify({ path: text(g.rng, 5) }),
    });
  }
  const data: Obj = {
    turn: g.turn,
    step: g.step,
    message: {
      id: nextId(g, "a"),
      role: "assistant",
      content,
      source: { kind: "model", provider: "p", model: "m" },
    },
    stream: [{ time: 1, chunk: jsonValue(g.rng, 2) }],
  };
  if (g.rng.chance(0.3)) data.usage = { input: g.rng.int(0, 99) };
  if (g.rng.chance(0.1)) data.interrupted = g.rng.chance(0.5);
  return data;
};

const toolResultData = (g: GenState): Obj => {
  const callId = g.openCalls.shift() ?? nextId(g, "call");
  const isError = g.rng.chance(0.2);
  const block: Obj = {
    type: "tool-result",
    toolCallId: callId,
    content: innerToolContent(g.rng),
  };
  if (isError || g.rng.chance(0.2)) block.isError = isError;
  const data: Obj = {
    turn: g.turn,
    step: g.step,
    message: {
      id: nextId(g, "t"),
      role: "user",
      content: [block],
      source: { kind: "tool", callId },
    },
  };
  if (isError && g.rng.chance(0.7)) {
    data.error = { name: "ToolFailed", code: "E_TOOL" };
  }
  if (g.rng.chance(0.4)) data.meta = jsonValue(g.rng, 2);
  return data;
};

const logOnly = (g: GenState): Obj => {
  const rng = g.rng;
  switch (rng.int(0, 12)) {
    case 0:
      g.turn++;
      g.step = 0;
      return envelope(g, "turn/start", { turn: g.turn });
    case 1:
      return envelope(g, "turn/end", {
        turn: g.turn,
        reason: { kind: rng.pick(TURN_END_REASONS) },
      });
    case 2:
      g.step++;
      return envelope(g, "step/start", { turn: g.turn, step: g.step });
    case 3:
      return envelope(g, "step/end", { turn: g.turn, step: g.step });
    case 4:
      return rng.chance(0.5)
        ? envelope(g, "assistant/attempt", {
          turn: g.turn,
          step: g.step,
          stream: [{ time: 2, chunk: jsonValue(rng, 1) }],
        })
        : envelope(g, "assistant/partial", {
          turn: g.turn,
          step: g.step,
          offset: rng.int(0, 40),
          stream: [{ time: 2, chunk: jsonValue(rng, 1) }],
        });
    case 5:
      return envelope(g, "tool/call", {
        turn: g.turn,
        step: g.step,
        callId: g.openCalls[0] ?? "call-x",
        name: "read",
        arguments: "{}",
      });
    case 6: {
      const config: Obj = { provider: "p", model: "m" };
      if (rng.chance(0.3)) config.tools = [{ name: "read" }];
      return envelope(g, "request/header", {
        header: { config },
        reason: jsonValue(rng, 1),
      });
    }
    case 7: {
      const data: Obj = { provider: "p", model: "m" };
      if (rng.chance(0.5)) data.contextWindow = rng.int(0, 200000);
      return envelope(g, "request/context", data);
    }
    case 8:
      return envelope(
        g,
        "session/end-seed",
        rng.chance(0.5) ? {} : { inherited: true },
      );
    case 9:
      return envelope(g, "compaction/start", {
        compactionId: nextId(g, "c"),
        turn: rng.chance(0.2) ? null : g.turn,
        ...(rng.chance(0.3) ? { sourceCommandId: nextId(g, "cmd") } : {}),
      });
    case 10:
      return envelope(g, "compaction/summary", {
        compactionId: nextId(g, "c"),
        summary: text(rng),
        shadowedSeqs: g.surface.nodes.slice(0, 2),
      });
    case 11:
      return envelope(g, "compaction/prune", {
        shadowedSeqs: g.surface.nodes.slice(-1),
      });
    default: {
      const data: Obj = { compactionId: nextId(g, "c") };
      if (rng.chance(0.3)) data.error = jsonValue(rng, 1);
      if (rng.chance(0.3)) data.turn = rng.chance(0.5) ? null : g.turn;
      if (rng.chance(0.3)) data.sourceCommandId = nextId(g, "cmd");
      return envelope(g, "compaction/end", data);
    }
  }
};

const opaque = (g: GenState): Obj => {
  const event: Obj = {
    type: g.rng.pick(["x/future", "harness/note", "ext/thing"]),
    seq: g.surface.next,
    time: 5,
    data: jsonValue(g.rng, 3),
    ignorable: true,
  };
  // Opaque metadata is kept as read and never interpreted.
  if (g.rng.chance(0.3)) event.surfaceOp = jsonValue(g.rng, 1);
  if (g.rng.chance(0.3)) event.sourceEventSeqs = jsonValue(g.rng, 1);
  return event;
};

const headIsSystem = (g: GenState): boolean => {
  const head = g.surface.nodes[0];
  return head !== undefined &&
    g.surface.events.get(head)?.type === "system/message";
};

/** Sources: the cited nodes plus a few other earlier seqs, shuffled. */
const citing = (g: GenState, nodes: ReadonlyArray<number>): number[] => {
  const out = [...nodes];
  const seq = g.surface.next;
  const extra = g.rng.int(0, 2);
  for (let i = 0; i < extra && seq > 0; i++) {
    const s = g.rng.int(0, seq - 1);
    if (out.indexOf(s) === -1) out.push(s);
  }
  for (let i = out.length - 1; i > 0; i--) {
    const j = g.rng.int(0, i);
    const a = out[i];
    const b = out[j];
    if (a === undefined || b === undefined) continue;
    out[i] = b;
    out[j] = a;
  }
  return out;
};

const replaceOp = (startSeq: number, endSeq: number): Obj => ({
  op: "replace",
  startSeq,
  endSeq,
});

/** Whether the node is an assistant message with a call still open. */
const opensCall = (g: GenState, node: number): boolean => {
  const event = g.surface.events.get(node);
  if (event?.type !== "assistant/message" || !isObj(event.data)) return false;
  const message = event.data.message;
  const content = isObj(message) ? message.content : undefined;
  return Array.isArray(content) &&
    content.some((b) =>
      isObj(b) && b.type === "tool-call" && g.openCalls.includes(String(b.id))
    );
};

const userReplace = (g: GenState): Obj | undefined => {
  const nodes = g.surface.nodes;
  const lo = headIsSystem(g) ? 1 : 0;
  if (nodes.length - lo < 1) return undefined;
  const i = g.rng.int(lo, nodes.length - 1);
  const j = g.rng.int(i, Math.min(nodes.length - 1, i + 4));
  // A range ends before a message with an unanswered call.
  const wide = nodes.slice(i, j + 1);
  const open = wide.findIndex((n) => opensCall(g, n));
  const range = open < 0 ? wide : wide.slice(0, open);
  const start = range[0];
  const end = range[range.length - 1];
  if (start === undefined || end === undefined) return undefined;
  return {
    ...envelope(g, "user/message", userData(g, true)),
    surfaceOp: replaceOp(start, end),
    sourceEventSeqs: citing(g, range),
  };
};

const toolPrune = (g: GenState): Obj | undefined => {
  const targets = g.surface.nodes.filter((n) =>
    g.surface.events.get(n)?.type === "tool/result"
  );
  if (targets.length === 0) return undefined;
  const target = g.rng.pick(targets);
  const before = g.surface.events.get(target);
  if (before === undefined) return undefined;
  const data = clone(before.data);
  if (!isObj(data) || !isObj(data.message)) return undefined;
  const content = data.message.content;
  if (!Array.isArray(content) || !isObj(content[0])) return undefined;
  content[0].content = g.rng.chance(0.5)
    ? []
    : [{ type: "text", text: `[pruned ${text(g.rng, 4)}]` }];
  return {
    ...envelope(g, "tool/result", data),
    surfaceOp: replaceOp(target, target),
    sourceEventSeqs: citing(g, [target]),
  };
};

const systemReplace = (g: GenState): Obj | undefined => {
  const head = g.surface.nodes[0];
  if (head === undefined) return undefined;
  if (!headIsSystem(g)) {
    // A surface without a system head gets one before its head.
    return {
      ...envelope(g, "system/message", systemData(g)),
      surfaceOp: "prepend",
    };
  }
  return {
    ...envelope(g, "system/message", systemData(g)),
    surfaceOp: replaceOp(head, head),
    sourceEventSeqs: citing(g, [head]),
  };
};

/** A user message returning to a random earlier point where a rewind holds. */
const userRewind = (g: GenState): Obj | undefined => {
  const state = g.surface;
  if (state.next - state.base < 2) return undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    const toSeq = g.rng.int(state.base, state.next - 1);
    const judged = judgeRewind(state, state.next, toSeq, undefined);
    if ("tag" in judged) continue;
    g.openCalls.length = 0;
    const event: Obj = {
      ...envelope(g, "user/message", userData(g, false)),
      surfaceOp: { op: "rewind", toSeq },
    };
    if (judged.takenOff.length > 0) event.sourceEventSeqs = judged.takenOff;
    return event;
  }
  return undefined;
};

/** An appended surface event of `type`. */
const appended = (g: GenState, type: string, data: Obj): Obj => ({
  ...envelope(g, type, data),
  surfaceOp: "append",
});

/**
 * What a draw of 0 to 99 makes: the first row whose bound is above the
 * draw. A row that finds nothing to make (`undefined`) draws again.
 */
const eventMix: ReadonlyArray<
  readonly [below: number, make: (g: GenState) => Obj | undefined]
> = [
  [25, logOnly],
  [30, opaque],
  [44, (g) => appended(g, "user/message", userData(g, false))],
  [58, (g) => appended(g, "assistant/message", assistantData(g))],
  [70, (g) => {
    const event = appended(g, "tool/result", toolResultData(g));
    if (g.rng.chance(0.5) && g.surface.next > 0) {
      event.sourceEventSeqs = [g.rng.int(0, g.surface.next - 1)];
    }
    return event;
  }],
  [81, userReplace],
  [91, toolPrune],
  [95, systemReplace],
  [97, userRewind],
  [100, (g) => appended(g, "system/message", systemData(g))],
];

const nextEvent = (g: GenState): Obj => {
  const rng = g.rng;
  if (g.surface.nodes.length === 0 && g.events.length < 3 && rng.chance(0.5)) {
    return appended(g, "system/message", systemData(g));
  }
  for (;;) {
    const r = rng.int(0, 99);
    const make = eventMix.find(([below]) => r < below)?.[1];
    const event = make?.(g);
    if (event !== undefined) return event;
  }
};

/**
 * A random valid log of `length` events starting at `base`.
 *
 * @param rng The case generator.
 * @param length How many events.
 * @param base The window base seq (0 for a whole log).
 * @returns The log.
 */
export function genValidLog(rng: Rng, length: number, base = 0): GenLog {
  const g: GenState = {
    rng,
    surface: checkerState(base),
    events: [],
    openCalls: [],
    turn: 0,
    step: 0,
    ids: 0,
  };
  while (g.events.length < length) {
    const event = nextEvent(g);
    const error = checkRelational(g.surface, event);
    if (error !== undefined) {
      throw new Error(`generator produced an invalid event: ${error.tag}`);
    }
    g.events.push(event);
  }
  return { base, events: g.events };
}

/** Indexes of events matching a predicate. */
export const indexesOf = (
  events: ReadonlyArray<Obj>,
  p: (e: Obj) => boolean,
): number[] => {
  const out: number[] = [];
  events.forEach((e, i) => {
    if (p(e)) out.push(i);
  });
  return out;
};

/** True for an event whose surfaceOp is a replace object. */
export const isReplace = (e: Obj): boolean =>
  isObj(e.surfaceOp) && e.surfaceOp.op === "replace" &&
  ["system/message", "user/message", "tool/result"].indexOf(String(e.type)) !==
    -1;

/** True for the core surface types. */
export const isSurface = (e: Obj): boolean =>
  ["system/message", "user/message", "assistant/message", "tool/result"]
    .indexOf(String(e.type)) !== -1;

/** True for the core log-only types. */
export const isLogOnly = (e: Obj): boolean =>
  !isSurface(e) && e.ignorable !== true;

/** Serializes a log as JSONL event lines, `\n` after each. */
export const toLines = (events: ReadonlyArray<unknown>): string =>
  events.map((e) => `${JSON.stringify(e)}\n`).join("");
