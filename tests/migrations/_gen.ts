/**
 * Generated sessions for the property tests.
 *
 * `buildV3` interprets a list of generated actions as a valid v3 session, placing system
 * messages exactly where the v2→v3 edge would (the empty head right after the first
 * `step/start`, a head replacement right before each `request/header` whose prompt changed,
 * ids from `syntheticSystemId`), so encoding it back to v2 and migrating must give the same
 * bytes. `toV2`, `toV1` and `toV0` encode a log one version down; `v2SurfaceMessages` is a
 * reference fold of a v2 log's own surface.
 *
 * @module
 */
import fc from "fast-check";
import { syntheticSystemId } from "../../migrations/mod.ts";

/** A JSON object as the generators build it. */
export type Obj = Record<string, unknown>;

/** One generated step of a session. */
export type Action =
  | { readonly k: "turn"; readonly prompt: number; readonly explicit: boolean }
  | { readonly k: "step"; readonly prompt: number; readonly explicit: boolean }
  | {
    readonly k: "header";
    readonly prompt: number;
    readonly explicit: boolean;
  }
  | { readonly k: "user"; readonly text: string }
  | {
    readonly k: "assistant";
    readonly text: string;
    readonly tool: boolean;
    readonly empty: boolean;
    readonly chunks: number;
    readonly isError: boolean;
  }
  | { readonly k: "attempt"; readonly chunks: number }
  | { readonly k: "compact"; readonly at: number; readonly len: number }
  | { readonly k: "prune"; readonly at: number }
  | { readonly k: "note" };

const prompts: ReadonlyArray<string> = [
  "",
  "You are terse.",
  "Be kind.",
  "Answer in French.",
];

const promptArb = {
  prompt: fc.nat({ max: prompts.length - 1 }),
  explicit: fc.boolean(),
};

/** Actions, weighted so that sessions have turns, steps and messages. */
export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant("turn" as const), ...promptArb }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant("step" as const), ...promptArb }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant("header" as const), ...promptArb }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("user" as const),
      text: fc.string({ maxLength: 8 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("assistant" as const),
      text: fc.string({ maxLength: 8 }),
      tool: fc.boolean(),
      empty: fc.boolean(),
      chunks: fc.nat({ max: 3 }),
      isError: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("attempt" as const),
      chunks: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("compact" as const),
      at: fc.nat(),
      len: fc.nat({ max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant("prune" as const), at: fc.nat() }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("note" as const) }) },
);

/** A generated v3 session: its events, plus how each header's prompt was spelled in v2. */
export interface V3Session {
  readonly id: string;
  readonly events: ReadonlyArray<Obj>;
  /** v3 seq of a `request/header` → whether an empty prompt was written as `system: ""`. */
  readonly explicitEmpty: ReadonlySet<number>;
}

const text = (t: string): Obj => ({ type: "text", text: t });

/**
 * Interpret actions as a valid v3 session.
 *
 * @param id The session id.
 * @param actions The generated actions.
 * @returns The session.
 */
export function buildV3(id: string, actions: ReadonlyArray<Action>): V3Session {
  const events: Array<Obj> = [];
  const explicitEmpty = new Set<number>();
  const surface: Array<number> = [];
  let time = 1_000;
  let v2seq = 0;
  let turn = -1;
  let step = -1;
  let inTurn = false;
  let inStep = false;
  let head: number | undefined;
  let prompt = "";
  let compactions = 0;
  let calls = 0;
  let messages = 0;

  const emit = (e: Obj): number => {
    const seq = events.length;
    events.push({ ...e, seq, time: e["time"] ?? ++time });
    if (e["type"] !== "system/message") v2seq += 1;
    return seq;
  };
  const reorder = (e: Obj): Obj => {
    const { type, seq, time: t, data, ignorable, surfaceOp, sourceEventSeqs } =
      e;
    const out: Obj = { type, seq, time: t, data };
    if (ignorable !== undefined) out["ignorable"] = ignorable;
    if (surfaceOp !== undefined) out["surfaceOp"] = surfaceOp;
    if (sourceEventSeqs !== undefined) out["sourceEventSeqs"] = sourceEventSeqs;
    return out;
  };
  const system = (
    anchorV2: number,
    anchorTime: number,
    content: string,
  ): void => {
    const data = {
      turn,
      step,
      message: {
        id: syntheticSystemId(id, anchorV2),
        role: "system",
        content: content === "" ? [] : [text(content)],
        source: { kind: "plugin", plugin: "system-prompt" },
      },
    };
    if (head === undefined) {
      head = emit({
        type: "system/message",
        time: anchorTime,
        data,
        surfaceOp: "append",
      });
      surface.push(head);
    } else {
      const old = head;
      head = emit({
        type: "system/message",
        time: anchorTime,
        data,
        surfaceOp: { op: "replace", startSeq: old, endSeq: old },
        sourceEventSeqs: [old],
      });
      surface[surface.indexOf(old)] = head;
    }
  };
  const header = (p: number, explicit: boolean): void => {
    const next = prompts[p] ?? "";
    const t = ++time;
    if (next !== prompt) system(v2seq, t, next);
    prompt = next;
    const seq = emit({
      type: "request/header",
      time: t,
      data: {
        header: { config: { provider: "p", model: "m" } },
        reason: { kind: "step" },
      },
    });
    if (explicit) explicitEmpty.add(seq);
  };
  const stepStart = (): void => {
    const t = ++time;
    emit({ type: "step/start", time: t, data: { turn, step } });
    inStep = true;
    if (head === undefined) system(v2seq - 1, t, "");
  };
  const closeStep = (): void => {
    if (inStep) emit({ type: "step/end", data: { turn, step } });
    inStep = false;
  };
  const stream = (n: number): Array<Obj> => {
    const out: Array<Obj> = [];
    for (let i = 0; i < n; i++) {
      out.push({ time: ++time, chunk: { delta: `d${time}` } });
    }
    return out;
  };

  for (const a of actions) {
    switch (a.k) {
      case "turn": {
        closeStep();
        if (inTurn) {
          emit({
            type: "turn/end",
            data: { turn, reason: { kind: "completed" } },
          });
        }
        turn += 1;
        step = 0;
        inTurn = true;
        emit({ type: "turn/start", data: { turn } });
        stepStart();
        header(a.prompt, a.explicit);
        break;
      }
      case "step": {
        if (!inTurn) break;
        closeStep();
        step += 1;
        stepStart();
        header(a.prompt, a.explicit);
        break;
      }
      case "header": {
        if (inStep) header(a.prompt, a.explicit);
        break;
      }
      case "user": {
        if (head === undefined) break;
        const seq = emit({
          type: "user/message",
          data: {
            id: `u${messages++}`,
            role: "user",
            content: [text(a.text)],
            source: { kind: "user" },
          },
          surfaceOp: "append",
        });
        surface.push(seq);
        break;
      }
      case "assistant": {
        if (!inStep) break;
        const callId = `call${calls++}`;
        const content: Array<Obj> = a.empty ? [] : [text(a.text)];
        if (a.tool) {
          content.push({
            type: "tool-call",
            id: callId,
            name: "tool",
            arguments: "{}",
          });
        }
        const s = stream(a.chunks);
        const seq = emit({
          type: "assistant/message",
          data: {
            turn,
            step,
            message: {
              id: `a${messages++}`,
              role: "assistant",
              content,
              source: { kind: "model", provider: "p", model: "m" },
            },
            stream: s,
          },
          surfaceOp: "append",
        });
        surface.push(seq);
        if (a.tool) {
          const call = emit({
            type: "tool/call",
            data: { turn, step, callId, name: "tool", arguments: "{}" },
          });
          const block: Obj = {
            type: "tool-result",
            toolCallId: callId,
            content: [text("out")],
          };
          if (a.isError) block["isError"] = true;
          const result = emit({
            type: "tool/result",
            data: {
              turn,
              step,
              message: {
                id: `r${messages++}`,
                role: "user",
                content: [block],
                source: { kind: "tool", callId },
              },
              ...(a.isError ? { error: { name: "Failed", code: "E" } } : {}),
            },
            surfaceOp: "append",
            sourceEventSeqs: [call],
          });
          surface.push(result);
        }
        break;
      }
      case "attempt": {
        if (!inStep) break;
        const s = stream(a.chunks);
        const last = s[s.length - 1];
        emit({
          type: "assistant/attempt",
          time: last?.["time"],
          data: { turn, step, stream: s },
        });
        // The retry: a v1 log could not tell two back-to-back attempts apart.
        header(prompts.indexOf(prompt), false);
        break;
      }
      case "compact": {
        const from = head === undefined ? 0 : 1;
        const room = surface.length - from;
        if (room < 1) break;
        const start = from + (a.at % room);
        const end = Math.min(surface.length - 1, start + a.len);
        const range = surface.slice(start, end + 1);
        const cid = `k${compactions++}`;
        const k0 = emit({
          type: "compaction/start",
          data: { compactionId: cid, turn: Math.max(turn, 0) },
        });
        const k1 = emit({
          type: "compaction/summary",
          data: {
            compactionId: cid,
            summary: `summary ${cid}`,
            shadowedSeqs: range,
          },
        });
        const seq = emit({
          type: "user/message",
          data: {
            id: `s${messages++}`,
            role: "user",
            content: [text(`Summary ${cid}`)],
            source: { kind: "plugin", plugin: "compaction" },
          },
          surfaceOp: {
            op: "replace",
            startSeq: range[0],
            endSeq: range[range.length - 1],
          },
          sourceEventSeqs: [k0, k1, ...range],
        });
        surface.splice(start, range.length, seq);
        emit({ type: "compaction/end", data: { compactionId: cid } });
        break;
      }
      case "prune": {
        const results = surface.filter((s) =>
          events[s]?.["type"] === "tool/result"
        );
        if (results.length === 0) break;
        const target = results[a.at % results.length] ?? 0;
        const old = events[target];
        const data = structuredClone(old?.["data"]);
        const message =
          typeof data === "object" && data !== null && "message" in data
            ? data.message
            : undefined;
        const block = typeof message === "object" && message !== null &&
            "content" in message &&
            Array.isArray(message.content)
          ? message.content[0]
          : undefined;
        if (typeof block === "object" && block !== null && "content" in block) {
          block.content = [text("[pruned]")];
        }
        emit({ type: "compaction/prune", data: { shadowedSeqs: [target] } });
        const seq = emit({
          type: "tool/result",
          data,
          surfaceOp: { op: "replace", startSeq: target, endSeq: target },
          sourceEventSeqs: [target],
        });
        surface[surface.indexOf(target)] = seq;
        break;
      }
      case "note": {
        emit({ type: "x-plugin/note", data: { at: time }, ignorable: true });
        break;
      }
    }
  }
  return { id, events: events.map(reorder), explicitEmpty };
}

const mapSeqs = (list: unknown, map: ReadonlyMap<number, number>): unknown =>
  Array.isArray(list) ? list.map((s) => map.get(s) ?? -1) : list;

const rewriteRefs = (
  e: Obj,
  map: ReadonlyMap<number, number>,
  seq: number,
  v3: boolean,
): Obj => {
  const out: Obj = { ...e, seq };
  const op = e["surfaceOp"];
  if (typeof op === "object" && op !== null) {
    const start = "startSeq" in op
      ? op.startSeq
      : "start" in op
      ? op.start
      : undefined;
    const end = "endSeq" in op ? op.endSeq : "end" in op ? op.end : undefined;
    const s = typeof start === "number" ? map.get(start) ?? -1 : -1;
    const t = typeof end === "number" ? map.get(end) ?? -1 : -1;
    out["surfaceOp"] = v3
      ? { op: "replace", startSeq: s, endSeq: t }
      : { op: "replace", start: s, end: t };
  }
  if (e["sourceEventSeqs"] !== undefined) {
    out["sourceEventSeqs"] = mapSeqs(e["sourceEventSeqs"], map);
  }
  const data = e["data"];
  if (
    (e["type"] === "compaction/summary" || e["type"] === "compaction/prune" ||
      e["type"] === "compact/summary" || e["type"] === "compact/prune") &&
    typeof data === "object" && data !== null && "shadowedSeqs" in data
  ) {
    out["data"] = { ...data, shadowedSeqs: mapSeqs(data.shadowedSeqs, map) };
  }
  return out;
};

/** The value at `path` of keys into `value`, or undefined where one is missing. */
const at = (value: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>(
    (v, key) =>
      typeof v === "object" && v !== null && key in v
        ? Reflect.get(v, key)
        : undefined,
    value,
  );

const contentText = (e: Obj): string => {
  const content = at(e, "data", "message", "content");
  const first = Array.isArray(content) ? content[0] : undefined;
  const text = at(first, "text");
  return typeof text === "string" ? text : "";
};

/**
 * Encode a v3 session as a v2 log: drop system messages, put the prompt in each header,
 * spell replaces `{start, end}`, renumber.
 *
 * @param session The v3 session.
 * @returns The v2 events.
 */
export function toV2(session: V3Session): Array<Obj> {
  const map = new Map<number, number>();
  const out: Array<Obj> = [];
  let prompt = "";
  for (const e of session.events) {
    const seq = e["seq"];
    if (typeof seq !== "number") continue;
    if (e["type"] === "system/message") {
      prompt = contentText(e);
      continue;
    }
    map.set(seq, out.length);
    const next = rewriteRefs(e, map, out.length, false);
    if (e["type"] === "request/header") {
      const data = e["data"];
      const header =
        typeof data === "object" && data !== null && "header" in data
          ? data.header
          : {};
      const withSystem = prompt !== "" || session.explicitEmpty.has(seq);
      next["data"] = {
        ...(typeof data === "object" ? data : {}),
        header: {
          ...(typeof header === "object" ? header : {}),
          ...(withSystem ? { system: prompt } : {}),
        },
      };
    }
    out.push(next);
  }
  return out;
}

/**
 * Encode a v2 log as a v1 log: each stream record becomes an `assistant/chunk` before its
 * message (cited in order); an attempt becomes its chunks only.
 *
 * @param events The v2 events.
 * @returns The v1 events.
 */
export function toV1(events: ReadonlyArray<Obj>): Array<Obj> {
  const map = new Map<number, number>();
  const out: Array<Obj> = [];
  for (const e of events) {
    const type = e["type"];
    const data = e["data"];
    if (
      (type === "assistant/message" || type === "assistant/attempt") &&
      typeof data === "object" && data !== null
    ) {
      const stream: unknown = "stream" in data ? data.stream : [];
      const rest = Object.fromEntries(
        Object.entries(data).filter(([k]) => k !== "stream"),
      );
      const turn = "turn" in data ? data.turn : 0;
      const step = "step" in data ? data.step : 0;
      const chunks: Array<number> = [];
      for (const r of Array.isArray(stream) ? stream : []) {
        if (
          typeof r !== "object" || r === null || !("time" in r) ||
          !("chunk" in r)
        ) continue;
        chunks.push(out.length);
        out.push({
          type: "assistant/chunk",
          seq: out.length,
          time: r.time,
          data: { turn, step, chunk: r.chunk },
        });
      }
      if (type === "assistant/attempt") continue;
      const seq = e["seq"];
      if (typeof seq === "number") map.set(seq, out.length);
      const { data: _d, ...envelope } = e;
      out.push({
        ...envelope,
        seq: out.length,
        data: rest,
        ...(chunks.length > 0 ? { sourceEventSeqs: chunks } : {}),
      });
      continue;
    }
    const seq = e["seq"];
    if (typeof seq === "number") map.set(seq, out.length);
    out.push(rewriteRefs(e, map, out.length, false));
  }
  return out;
}

const v0Names: ReadonlyMap<string, string> = new Map([
  ["compaction/start", "compact/start"],
  ["compaction/summary", "compact/summary"],
  ["compaction/prune", "compact/prune"],
  ["compaction/end", "compact/end"],
]);

/**
 * Encode a v1 log as a v0 log: legacy spellings (every other user-sourced user message becomes
 * a `steering/message`).
 *
 * @param events The v1 events.
 * @returns The v0 events.
 */
export function toV0(events: ReadonlyArray<Obj>): Array<Obj> {
  let users = 0;
  return events.map((e) => {
    const type = e["type"];
    if (typeof type !== "string") return e;
    const renamed = v0Names.get(type);
    if (renamed !== undefined) return { ...e, type: renamed };
    const data = e["data"];
    if (
      type === "user/message" && typeof data === "object" && data !== null &&
      "source" in data &&
      typeof data.source === "object" && data.source !== null &&
      "kind" in data.source &&
      data.source.kind === "user" && users++ % 2 === 0
    ) {
      return { ...e, type: "steering/message" };
    }
    return e;
  });
}

/**
 * A reference fold of a v2 log's own surface: the messages it derives, in order (assistant
 * messages with empty content derive nothing).
 *
 * @param events The v2 events.
 * @returns The messages.
 */
export function v2SurfaceMessages(events: ReadonlyArray<Obj>): Array<unknown> {
  const byseq = new Map<number, Obj>();
  let surface: Array<number> = [];
  for (const e of events) {
    const seq = e["seq"];
    if (typeof seq !== "number") continue;
    byseq.set(seq, e);
    const op = e["surfaceOp"];
    if (op === "append") surface.push(seq);
    else if (
      typeof op === "object" && op !== null && "start" in op && "end" in op
    ) {
      const a = surface.indexOf(Number(op.start));
      const b = surface.indexOf(Number(op.end));
      surface = [...surface.slice(0, a), seq, ...surface.slice(b + 1)];
    }
  }
  const out: Array<unknown> = [];
  for (const seq of surface) {
    const e = byseq.get(seq);
    const data = e?.["data"];
    if (typeof data !== "object" || data === null) continue;
    const message = e?.["type"] === "user/message"
      ? data
      : "message" in data
      ? data.message
      : undefined;
    if (
      e?.["type"] === "assistant/message" && typeof message === "object" &&
      message !== null &&
      "content" in message && Array.isArray(message.content) &&
      message.content.length === 0
    ) continue;
    out.push(message);
  }
  return out;
}

/**
 * The prompts the v2 request headers carry, as the sequence of changes from "no prompt".
 *
 * @param events The v2 events.
 * @returns `["", p1, p2, ...]`, each different from the one before.
 */
export function headerPrompts(events: ReadonlyArray<Obj>): Array<string> {
  const out = [""];
  for (const e of events) {
    if (e["type"] !== "request/header") continue;
    const system = at(e, "data", "header", "system");
    const p = typeof system === "string" ? system : "";
    if (p !== out[out.length - 1]) out.push(p);
  }
  return out;
}

/**
 * The prompt text of a system message event (`""` for empty content).
 *
 * @param e A `system/message` event.
 * @returns Its prompt.
 */
export function systemPrompt(e: Obj): string {
  return contentText(e);
}
