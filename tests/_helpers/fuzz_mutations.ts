/**
 * Single mutations of one event of a valid log, each aimed at one rule of
 * docs/format.md (The rules and their errors). A mutation returns the mutated log and the tag it aims
 * at; the fuzz tests assert that the library and the reference checker
 * agree on every mutated log, and that aimed mutations hit their rule.
 *
 * @module
 */
import type { Rng } from "./fuzz.ts";
import {
  clone,
  type GenLog,
  indexesOf,
  isLogOnly,
  isReplace,
  isSurface,
  jsonValue,
  type Obj,
} from "./fuzz_logs.ts";
import {
  type CheckerState,
  checkerState,
  checkLog,
  checkRelational,
  judgeRewind,
} from "./reference_checker.ts";

/** A mutated log and the rule it aims at. */
export interface Mutant {
  /** The mutation's name. */
  readonly name: string;
  /** The mutated events. */
  readonly events: Obj[];
  /** The window base. */
  readonly base: number;
  /** The index of the mutated event. */
  readonly at: number;
  /** The tag the mutation should produce at `at`, when it is sure. */
  readonly expect: string | undefined;
}

type Mutation = (rng: Rng, log: GenLog) => Mutant | undefined;

const isObj = (v: unknown): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const opOf = (e: Obj): Obj | undefined =>
  isObj(e.surfaceOp) ? e.surfaceOp : undefined;

const sourcesOf = (e: Obj): number[] =>
  Array.isArray(e.sourceEventSeqs)
    ? e.sourceEventSeqs.filter((s): s is number => typeof s === "number")
    : [];

/** Applies `f` to a copy of event `at`. */
const edit = (
  log: GenLog,
  name: string,
  at: number,
  expect: string | undefined,
  f: (e: Obj) => void,
): Mutant => {
  const events = log.events.slice();
  const original = events[at];
  if (original === undefined) throw new RangeError("no event at index");
  const copy = clone(original);
  f(copy);
  events[at] = copy;
  return { name, events, base: log.base, at, expect };
};

const pickIndex = (
  rng: Rng,
  log: GenLog,
  p: (e: Obj, i: number) => boolean,
): number | undefined => {
  const all = indexesOf(log.events, (e) => p(e, log.events.indexOf(e)));
  return all.length === 0 ? undefined : rng.pick(all);
};

/** The checker's surface just before event `at`. */
const nodesBefore = (log: GenLog, at: number): ReadonlyArray<number> => {
  const verdict = checkLog(log.events.slice(0, at), log.base);
  return verdict.nodes;
};

const replaceRange = (log: GenLog, at: number): number[] => {
  const e = log.events[at];
  const op = e === undefined ? undefined : opOf(e);
  if (op === undefined) return [];
  const nodes = nodesBefore(log, at);
  const s = nodes.indexOf(Number(op.startSeq));
  const t = nodes.indexOf(Number(op.endSeq));
  return s === -1 || t === -1 ? [] : nodes.slice(s, t + 1);
};

/**
 * The mutation `name`: it edits with `f` a copy of one event that `p`
 * picks, aiming at `expect` (`f` may draw from `rng`; it runs at once).
 */
const picked = (
  name: string,
  p: (e: Obj) => boolean,
  expect: string | undefined,
  f: (e: Obj, rng: Rng) => void,
): Mutation =>
(rng, log) => {
  const at = pickIndex(rng, log, p);
  if (at === undefined) return undefined;
  return edit(log, name, at, expect, (e) => f(e, rng));
};

/** Picks a replace by a `type` event. */
const replaceBy = (type: string) => (e: Obj): boolean =>
  e.type === type && isReplace(e);

/** Picks a surface event that may cite sources. */
const mayCite = (e: Obj): boolean =>
  isSurface(e) && e.type !== "assistant/message";

/** Moves the replace's `endSeq` to `n`, citing `n`. */
const endAt = (e: Obj, n: number): void => {
  const op = opOf(e);
  if (op === undefined) return;
  op.endSeq = n;
  const sources = sourcesOf(e);
  if (!sources.includes(n)) sources.push(n);
  e.sourceEventSeqs = sources;
};

/** Whether the event is an assistant message with a tool call. */
const callsOf = (e: Obj | undefined): boolean => {
  if (e?.type !== "assistant/message" || !isObj(e.data)) return false;
  const message = e.data.message;
  const content = isObj(message) ? message.content : undefined;
  return Array.isArray(content) &&
    content.some((b) => isObj(b) && b.type === "tool-call");
};

/** A mutant of the whole log. */
const mutant = (
  log: GenLog,
  name: string,
  events: Obj[],
  at: number,
  expect: string | undefined,
): Mutant => ({ name, events, base: log.base, at, expect });

const userMessage = (id: string): Obj => ({
  id,
  role: "user",
  content: [{ type: "text", text: "mutant" }],
  source: { kind: "user" },
});

/** Picks an event carrying a rewind. */
const isRewind = (e: Obj): boolean => opOf(e)?.op === "rewind";

/** The checker's state just before event `at`. */
const stateBefore = (log: GenLog, at: number): CheckerState => {
  const state = checkerState(log.base);
  for (const e of log.events.slice(0, at)) checkRelational(state, e);
  return state;
};

/**
 * Retargets a rewind to a point where the checker finds `tag` (its sources
 * kept), when there is one.
 */
const rewindTo = (tag: string): Mutation => (rng, log) => {
  const at = pickIndex(rng, log, isRewind);
  const e = at === undefined ? undefined : log.events[at];
  if (at === undefined || e === undefined) return undefined;
  const state = stateBefore(log, at);
  const seq = Number(e.seq);
  const points: number[] = [];
  for (let x = log.base; x < seq; x++) {
    const judged = judgeRewind(state, seq, x, sourcesOf(e));
    if ("tag" in judged && judged.tag === tag) points.push(x);
  }
  if (points.length === 0) return undefined;
  const toSeq = rng.pick(points);
  return edit(log, `rewindTo${tag}`, at, tag, (copy) => {
    copy.surfaceOp = { op: "rewind", toSeq };
  });
};

const MUTATIONS: Record<string, Mutation> = {
  rewindBySystem: picked(
    "rewindBySystem",
    isRewind,
    "RewindNotUserMessage",
    (e) => {
      e.type = "system/message";
      e.data = {
        turn: 0,
        step: 0,
        message: {
          id: "sm",
          role: "system",
          content: [],
          source: { kind: "plugin", plugin: "p" },
        },
      };
    },
  ),
  rewindNotEarlier: picked(
    "rewindNotEarlier",
    isRewind,
    "RewindPointNotEarlier",
    (e, rng) => {
      e.surfaceOp = { op: "rewind", toSeq: Number(e.seq) + rng.int(0, 3) };
    },
  ),
  rewindBelowBase: (rng, log) => {
    if (log.base === 0) return undefined;
    const at = pickIndex(rng, log, isRewind);
    if (at === undefined) return undefined;
    return edit(log, "rewindBelowBase", at, "RewindNotHeld", (e) => {
      e.surfaceOp = { op: "rewind", toSeq: rng.int(0, log.base - 1) };
    });
  },
  rewindInsideWork: rewindTo("RewindPointInsideWork"),
  rewindDropsHead: rewindTo("RewindDropsSystemHead"),
  rewindBreaksPair: rewindTo("RewindBreaksToolPair"),
  rewindMiscites: (rng, log) => {
    const at = pickIndex(rng, log, isRewind);
    const e = at === undefined ? undefined : log.events[at];
    if (at === undefined || e === undefined) return undefined;
    const cited = sourcesOf(e);
    return edit(log, "rewindMiscites", at, "RewindSourcesMismatch", (copy) => {
      if (cited.length > 0 && rng.chance(0.5)) {
        const dropped = rng.pick(cited);
        const rest = cited.filter((n) => n !== dropped);
        if (rest.length > 0) copy.sourceEventSeqs = rest;
        else delete copy.sourceEventSeqs;
        return;
      }
      // Cite an earlier seq it does not take off: one of the point's own.
      const toSeq = Number(opOf(copy)?.toSeq);
      if (!cited.includes(toSeq)) copy.sourceEventSeqs = [...cited, toSeq];
    });
  },
  // ---- relational rules (§2.4)
  dropCitedSource: (rng, log) => {
    const at = pickIndex(rng, log, isReplace);
    if (at === undefined) return undefined;
    const range = replaceRange(log, at);
    if (range.length === 0) return undefined;
    const dropped = rng.pick(range);
    return edit(log, "dropCitedSource", at, "ShadowedNodeNotCited", (e) => {
      const rest = sourcesOf(e).filter((s) => s !== dropped);
      if (rest.length === 0) delete e.sourceEventSeqs;
      else e.sourceEventSeqs = rest;
    });
  },
  dropAllSources: picked(
    "dropAllSources",
    isReplace,
    "ShadowedNodeNotCited",
    (e) => {
      delete e.sourceEventSeqs;
    },
  ),
  shiftEndpoint: (rng, log) => {
    const at = pickIndex(rng, log, isReplace);
    if (at === undefined) return undefined;
    const e = log.events[at];
    if (e === undefined) return undefined;
    const seq = Number(e.seq);
    const key = rng.pick(["startSeq", "endSeq"]);
    const value = rng.int(0, seq - 1);
    return edit(log, "shiftEndpoint", at, undefined, (copy) => {
      const op = opOf(copy);
      if (op !== undefined) op[key] = value;
    });
  },
  endpointOffSurface: (rng, log) => {
    const at = pickIndex(rng, log, isReplace);
    if (at === undefined) return undefined;
    const nodes = nodesBefore(log, at);
    const e = log.events[at];
    if (e === undefined) return undefined;
    const off: number[] = [];
    for (let s = 0; s < Number(e.seq); s++) {
      if (!nodes.includes(s)) off.push(s);
    }
    if (off.length === 0) return undefined;
    const start = rng.chance(0.5);
    const value = rng.pick(off);
    return edit(
      log,
      "endpointOffSurface",
      at,
      start ? "ReplaceStartNotOnSurface" : "ReplaceEndNotOnSurface",
      (copy) => {
        const op = opOf(copy);
        if (op !== undefined) op[start ? "startSeq" : "endSeq"] = value;
      },
    );
  },
  swapEndpoints: picked(
    "swapEndpoints",
    (e) => isReplace(e) && opOf(e)?.startSeq !== opOf(e)?.endSeq,
    "ReplaceRangeInverted",
    (e) => {
      const op = opOf(e);
      if (op === undefined) return;
      const s = op.startSeq;
      op.startSeq = op.endSeq;
      op.endSeq = s;
    },
  ),
  toolResultWiden: (rng, log) => {
    const at = pickIndex(rng, log, replaceBy("tool/result"));
    if (at === undefined) return undefined;
    const nodes = nodesBefore(log, at);
    const e = log.events[at];
    const op = e === undefined ? undefined : opOf(e);
    if (op === undefined) return undefined;
    const i = nodes.indexOf(Number(op.startSeq));
    const next = nodes[i + 1];
    if (next === undefined) return undefined;
    return edit(
      log,
      "toolResultWiden",
      at,
      "ToolResultReplaceNotSingle",
      (copy) => endAt(copy, next),
    );
  },
  toolResultOverOther: (rng, log) => {
    const at = pickIndex(rng, log, replaceBy("tool/result"));
    if (at === undefined) return undefined;
    const nodes = nodesBefore(log, at);
    const others = nodes.filter((n) =>
      log.events[n - log.base]?.type !== "tool/result"
    );
    if (others.length === 0) return undefined;
    const target = rng.pick(others);
    return edit(
      log,
      "toolResultOverOther",
      at,
      "ToolResultReplaceTargetNotToolResult",
      (copy) => {
        copy.surfaceOp = { op: "replace", startSeq: target, endSeq: target };
        copy.sourceEventSeqs = [target];
      },
    );
  },
  toolResultChangeField: (rng, log) => {
    const at = pickIndex(rng, log, replaceBy("tool/result"));
    if (at === undefined) return undefined;
    const field = rng.pick([
      "id",
      "callId",
      "isError",
      "turn",
      "step",
      "error",
      "meta",
      "extraKey",
      "sourceExtra",
      "blockExtra",
      "dropMeta",
    ]);
    return edit(
      log,
      `toolResultChangeField:${field}`,
      at,
      undefined,
      (e) => {
        const data = e.data;
        if (!isObj(data) || !isObj(data.message)) return;
        const message = data.message;
        const block = Array.isArray(message.content) ? message.content[0] : {};
        const source = message.source;
        if (!isObj(block) || !isObj(source)) return;
        switch (field) {
          case "id":
            message.id = `${String(message.id)}x`;
            break;
          case "callId":
            source.callId = `${String(source.callId)}x`;
            block.toolCallId = source.callId;
            break;
          case "isError":
            if (block.isError === true) {
              block.isError = false;
              delete data.error;
            } else block.isError = true;
            break;
          case "turn":
            data.turn = Number(data.turn) + 1;
            break;
          case "step":
            data.step = Number(data.step) + 1;
            break;
          case "error":
            if (block.isError === true) {
              data.error = isObj(data.error)
                ? { ...data.error, code: "OTHER" }
                : { name: "X", code: "Y" };
            } else data.turn = Number(data.turn) + 1;
            break;
          case "meta":
            data.meta = [data.meta ?? null, jsonValue(rng, 1)];
            break;
          case "extraKey":
            data.extra = jsonValue(rng, 1);
            break;
          case "sourceExtra":
            source.extra = 1;
            break;
          case "blockExtra":
            block.cache = { ttl: 5 };
            break;
          default:
            if ("meta" in data) delete data.meta;
            else data.meta = null;
        }
      },
    );
  },
  headToUser: picked(
    "headToUser",
    replaceBy("system/message"),
    "SystemHeadProtected",
    (e) => {
      e.type = "user/message";
      e.data = userMessage("mut");
    },
  ),
  coverHead: (rng, log) => {
    const at = pickIndex(rng, log, replaceBy("user/message"));
    if (at === undefined) return undefined;
    const nodes = nodesBefore(log, at);
    const head = nodes[0];
    if (head === undefined) return undefined;
    if (log.events[head - log.base]?.type !== "system/message") {
      return undefined;
    }
    const range = replaceRange(log, at);
    const end = range[range.length - 1];
    if (end === undefined) return undefined;
    return edit(log, "coverHead", at, "SystemHeadProtected", (e) => {
      const op = opOf(e);
      if (op === undefined) return;
      op.startSeq = head;
      const sources = sourcesOf(e);
      for (const n of nodes.slice(0, nodes.indexOf(end) + 1)) {
        if (!sources.includes(n)) sources.push(n);
      }
      e.sourceEventSeqs = sources;
    });
  },
  // A system/message that replaces the head: the head before it is a
  // system prompt, so a prepend there is a second one.
  prependOverHead: picked(
    "prependOverHead",
    replaceBy("system/message"),
    "SystemHeadExists",
    (e, rng) => {
      e.surfaceOp = "prepend";
      if (rng.chance(0.5)) delete e.sourceEventSeqs;
    },
  ),
  prependNotSystem: picked(
    "prependNotSystem",
    (e) =>
      e.type === "user/message" || e.type === "assistant/message" ||
      e.type === "tool/result",
    "PrependNotSystemMessage",
    (e) => {
      e.surfaceOp = "prepend";
    },
  ),
  systemOverTwo: (rng, log) => {
    const at = pickIndex(rng, log, replaceBy("system/message"));
    if (at === undefined) return undefined;
    const second = nodesBefore(log, at)[1];
    if (second === undefined) return undefined;
    return edit(
      log,
      "systemOverTwo",
      at,
      "SystemHeadProtected",
      (e) => endAt(e, second),
    );
  },
  // An assistant message a later replacement shadows gets call ids no
  // result answers: the replacement then shadows unanswered calls.
  unanswerCall: (rng, log) => {
    const at = pickIndex(
      rng,
      log,
      (e, i) =>
        e.type === "user/message" && isReplace(e) &&
        replaceRange(log, i).some((n) => callsOf(log.events[n - log.base])),
    );
    if (at === undefined) return undefined;
    const node = replaceRange(log, at).find((n) =>
      callsOf(log.events[n - log.base])
    );
    if (node === undefined) return undefined;
    const events = log.events.slice();
    const copy = clone(events[node - log.base] ?? {});
    const message = isObj(copy.data) ? copy.data.message : undefined;
    const content = isObj(message) ? message.content : undefined;
    if (!Array.isArray(content)) return undefined;
    for (const block of content) {
      if (isObj(block) && block.type === "tool-call") {
        block.id = `${String(block.id)}-unanswered`;
      }
    }
    events[node - log.base] = copy;
    return mutant(
      log,
      "unanswerCall",
      events,
      at,
      "ReplaceShadowsUnansweredCall",
    );
  },
  assistantReplacer: (rng, log) => {
    const at = pickIndex(rng, log, replaceBy("user/message"));
    if (at === undefined) return undefined;
    const keepSources = rng.chance(0.5);
    return edit(
      log,
      "assistantReplacer",
      at,
      keepSources ? "SourcesOnAssistantMessage" : "ShadowedNodeNotCited",
      (e) => {
        e.type = "assistant/message";
        e.data = {
          turn: 0,
          step: 0,
          stream: [],
          message: {
            id: "am",
            role: "assistant",
            content: [],
            source: { kind: "model", provider: "p", model: "m" },
          },
        };
        if (!keepSources) delete e.sourceEventSeqs;
      },
    );
  },
  dropEvent: (rng, log) => {
    if (log.events.length < 2) return undefined;
    const at = rng.int(0, log.events.length - 2);
    const events = log.events.slice();
    events.splice(at, 1);
    return mutant(log, "dropEvent", events, at, "NonContiguousSeq");
  },
  duplicateEvent: (rng, log) => {
    if (log.events.length < 1) return undefined;
    const at = rng.int(0, log.events.length - 1);
    const events = log.events.slice();
    const e = events[at];
    if (e === undefined) return undefined;
    events.splice(at + 1, 0, clone(e));
    return mutant(log, "duplicateEvent", events, at + 1, "NonContiguousSeq");
  },
  swapAdjacent: (rng, log) => {
    if (log.events.length < 2) return undefined;
    const at = rng.int(0, log.events.length - 2);
    const events = log.events.slice();
    const a = events[at];
    const b = events[at + 1];
    if (a === undefined || b === undefined) return undefined;
    events[at] = b;
    events[at + 1] = a;
    return mutant(log, "swapAdjacent", events, at, undefined);
  },
  swapRenumber: (rng, log) => {
    if (log.events.length < 2) return undefined;
    const i = rng.int(0, log.events.length - 2);
    const j = rng.int(i + 1, Math.min(log.events.length - 1, i + 5));
    const events = log.events.map((e) => clone(e));
    const a = events[i];
    const b = events[j];
    if (a === undefined || b === undefined) return undefined;
    events[i] = b;
    events[j] = a;
    events.forEach((e, k) => {
      e.seq = log.base + k;
    });
    return mutant(log, "swapRenumber", events, i, undefined);
  },
  windowBelowBase: (rng, log) => {
    if (log.base === 0) return undefined;
    const at = pickIndex(rng, log, isReplace);
    if (at === undefined) return undefined;
    const below = rng.int(0, log.base - 1);
    const start = rng.chance(0.5);
    return edit(
      log,
      "windowBelowBase",
      at,
      start ? "ReplaceStartNotOnSurface" : "ReplaceEndNotOnSurface",
      (e) => {
        const op = opOf(e);
        if (op !== undefined) op[start ? "startSeq" : "endSeq"] = below;
        e.sourceEventSeqs = [...sourcesOf(e), below].filter((s, k, all) =>
          all.indexOf(s) === k
        );
      },
    );
  },

  // ---- event-local rules (§2.3)
  extraEnvelopeKey: (rng, log) => {
    const at = rng.int(0, log.events.length - 1);
    return edit(log, "extraEnvelopeKey", at, "InvalidEnvelope", (e) => {
      Object.defineProperty(
        e,
        rng.pick(["meta", "__proto__", "constructor", "Type", "seqs"]),
        { value: 1, enumerable: true, writable: true, configurable: true },
      );
    });
  },
  badEnvelopeField: (rng, log) => {
    const at = rng.int(0, log.events.length - 1);
    const how = rng.int(0, 5);
    return edit(log, "badEnvelopeField", at, "InvalidEnvelope", (e) => {
      if (how === 0) e.type = "";
      else if (how === 1) e.type = 7;
      else if (how === 2) e.time = 1.5;
      else if (how === 3) e.time = "0";
      else if (how === 4) delete e.data;
      else e.ignorable = rng.pick([false, "true", 1, null]);
    });
  },
  badSeq: (rng, log) => {
    const at = rng.int(0, log.events.length - 1);
    const value = rng.pick([-1, 1.5, -0, 2 ** 53, "3", null, [1], 1e300]);
    return edit(log, "badSeq", at, "InvalidSessionSeq", (e) => {
      e.seq = value;
    });
  },
  unknownType: picked(
    "unknownType",
    (e) => e.ignorable !== true,
    "UnknownEventType",
    (e, rng) => {
      e.type = rng.pick(["user/Message", "tool/results", "x/y", "turn"]);
    },
  ),
  breakData: picked(
    "breakData",
    (e) => e.ignorable !== true,
    undefined,
    (e, rng) => {
      const data = e.data;
      if (!isObj(data)) return;
      const keys = Object.keys(data);
      if (keys.length === 0) {
        data.extra = 1;
        return;
      }
      const key = rng.pick(keys);
      if (rng.chance(0.5)) delete data[key];
      else data[key] = rng.pick([null, -1, 1.5, {}, [], true]);
    },
  ),
  nullData: picked(
    "nullData",
    (e) => e.ignorable !== true,
    "InvalidEventData",
    (e, rng) => {
      e.data = rng.pick([null, "x", 0, true]);
    },
  ),
  dropSurfaceOp: picked("dropSurfaceOp", isSurface, "SurfaceOpMissing", (e) => {
    delete e.surfaceOp;
  }),
  badSurfaceOp: (rng, log) => {
    const at = pickIndex(rng, log, isSurface);
    if (at === undefined) return undefined;
    const e0 = log.events[at];
    const seq = Number(e0?.seq);
    const s = Math.max(0, seq - 1);
    const value = rng.pick<unknown>([
      "Append",
      "replace",
      null,
      { op: "replace", start: s, end: s },
      { op: "replace", startSeq: s },
      { op: "replace", startSeq: s, endSeq: s, extra: 1 },
      { op: "Replace", startSeq: s, endSeq: s },
      { op: "replace", startSeq: -0, endSeq: s },
      { op: "replace", startSeq: "0", endSeq: s },
      { op: "replace", startSeq: 1.5, endSeq: s },
      ["append"],
    ]);
    return edit(log, "badSurfaceOp", at, "InvalidSurfaceOp", (e) => {
      e.surfaceOp = clone(value);
    });
  },
  metadataOnLogOnly: picked(
    "metadataOnLogOnly",
    isLogOnly,
    "SurfaceMetadataOnLogOnlyEvent",
    (e, rng) => {
      if (rng.chance(0.5)) e.surfaceOp = "append";
      else e.sourceEventSeqs = Number(e.seq) > 0 ? [0] : "x";
      if (rng.chance(0.3)) e.ignorable = true;
    },
  ),
  sourcesOnAssistant: picked(
    "sourcesOnAssistant",
    (e) => e.type === "assistant/message",
    "SourcesOnAssistantMessage",
    (e, rng) => {
      e.sourceEventSeqs = rng.pick<unknown>([[], [0], "x"]);
    },
  ),
  badSourceList: picked(
    "badSourceList",
    mayCite,
    "InvalidSourceList",
    (e, rng) => {
      const bad = rng.pick<unknown>(["0", -1, 1.5, -0, null, [0], 2 ** 53]);
      e.sourceEventSeqs = rng.chance(0.3)
        ? rng.pick<unknown>(["0", 0, {}, null])
        : [...sourcesOf(e), bad];
    },
  ),
  emptySources: picked(
    "emptySources",
    mayCite,
    "EmptySourceList",
    (e) => {
      e.sourceEventSeqs = [];
    },
  ),
  duplicateSource: picked(
    "duplicateSource",
    (e) => mayCite(e) && Number(e.seq) > 0,
    "DuplicateSource",
    (e, rng) => {
      const sources = sourcesOf(e);
      const dup = sources.length > 0
        ? rng.pick(sources)
        : rng.int(0, Number(e.seq) - 1);
      if (sources.length === 0) sources.push(dup);
      sources.splice(rng.int(0, sources.length), 0, dup);
      e.sourceEventSeqs = sources;
    },
  ),
  futureSource: picked(
    "futureSource",
    mayCite,
    "SourceNotEarlier",
    (e, rng) => {
      const seq = Number(e.seq);
      e.sourceEventSeqs = [...sourcesOf(e), seq + rng.int(0, 3)];
    },
  ),
  endpointNotEarlier: picked(
    "endpointNotEarlier",
    isReplace,
    "ReplaceEndpointNotEarlier",
    (e, rng) => {
      const op = opOf(e);
      if (op === undefined) return;
      op[rng.pick(["startSeq", "endSeq"])] = Number(e.seq) + rng.int(0, 2);
    },
  ),
  toolErrorWithoutIsError: picked(
    "toolErrorWithoutIsError",
    (e) => e.type === "tool/result",
    "ToolErrorWithoutIsError",
    (e, rng) => {
      const data = e.data;
      if (!isObj(data) || !isObj(data.message)) return;
      const content = data.message.content;
      const block = Array.isArray(content) ? content[0] : undefined;
      if (!isObj(block)) return;
      if (rng.chance(0.5)) delete block.isError;
      else block.isError = false;
      data.error = { name: "ToolFailed", code: "E" };
    },
  ),
  retiredHeaderSystem: picked(
    "retiredHeaderSystem",
    (e) => e.type === "request/header",
    "RetiredHeaderSystem",
    (e, rng) => {
      const data = e.data;
      if (isObj(data) && isObj(data.header)) {
        data.header.system = rng.pick<unknown>(["You are", null, [], {}]);
      }
    },
  ),
  subtreeToJunk: (rng, log) => {
    const at = rng.int(0, log.events.length - 1);
    return edit(log, "subtreeToJunk", at, undefined, (e) => {
      // Walk to a random object inside the event and overwrite one key.
      let node: Obj = e;
      for (let depth = 0; depth < 6; depth++) {
        const keys = Object.keys(node);
        if (keys.length === 0) break;
        const key = rng.pick(keys);
        const child = node[key];
        const next = Array.isArray(child) ? child[0] : child;
        if (isObj(next) && rng.chance(0.7)) {
          node = next;
          continue;
        }
        if (Array.isArray(child) && child.length > 0 && rng.chance(0.5)) {
          child[rng.int(0, child.length - 1)] = jsonValue(rng, 2);
        } else if (rng.chance(0.2)) delete node[key];
        else node[key] = jsonValue(rng, 2);
        break;
      }
    });
  },
};

/** The names of every mutation. */
export const MUTATION_NAMES: ReadonlyArray<string> = Object.keys(MUTATIONS);

/**
 * Applies one named mutation, or undefined when it does not apply to `log`.
 *
 * @param rng The case generator.
 * @param log A valid log.
 * @param name A mutation name from {@link MUTATION_NAMES}.
 * @returns The mutant.
 */
export function mutate(
  rng: Rng,
  log: GenLog,
  name: string,
): Mutant | undefined {
  const m = MUTATIONS[name];
  if (m === undefined) throw new RangeError(`unknown mutation ${name}`);
  return m(rng, log);
}
