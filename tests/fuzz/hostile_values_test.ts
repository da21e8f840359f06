/**
 * Structural attacks on the decoder and the fold: numbers at the edges of
 * IEEE doubles, deep nesting, 10 MB strings, prototype-named keys,
 * duplicate keys, null-prototype objects and random junk. Every case is a
 * small log given as JSON lines; each must be judged the same way by the
 * library and the reference checker, must not throw, and must not touch a
 * built-in prototype. Accepted events must encode back to the same JSON.
 */
import assert from "node:assert/strict";
import { Result } from "effect";
import { decodeEventResult, encodeEvent } from "@palimpsest/session/schema";
import {
  config,
  countsReport,
  fuzz,
  heavyRuns,
  leavesPrototypes,
} from "../_helpers/fuzz.ts";
import { assertAgree } from "../_helpers/fuzz_compare.ts";
import { ENVELOPE_KEYS, jsonEqual } from "../_helpers/reference_checker.ts";
import { genValidLog, jsonValue } from "../_helpers/fuzz_logs.ts";
import { stringifyIteratively } from "../../src/core/json.ts";

/** Parses lines, judges them, checks prototypes; returns the outcome tag. */
const judge = (
  lines: ReadonlyArray<string>,
  options: { base?: number; roundTrip?: boolean } = {},
): string => {
  const { values, outcome, library } = leavesPrototypes(() => {
    const values = lines.map((line) => JSON.parse(line));
    return { values, ...assertAgree(values, options.base ?? 0) };
  });
  assert.equal(Reflect.get({}, "polluted"), undefined);
  if (options.roundTrip !== false) {
    library.events.forEach((event, i) => {
      const encoded = JSON.parse(JSON.stringify(encodeEvent(event)));
      assert.ok(jsonEqual(encoded, values[i]), `event ${i} round-trips`);
    });
  }
  return outcome;
};

const USER =
  `{"id":"u","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`;
const user = (seq: number, extra = ""): string =>
  `{"type":"user/message","seq":${seq},"time":0,"data":${USER},"surfaceOp":"append"${extra}}`;
const toolData = (meta: string, inner = "[]", blockExtra = ""): string =>
  `{"turn":0,"step":0,"message":{"id":"t","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":${inner}${blockExtra}}]}${
    meta === "" ? "" : `,"meta":${meta}`
  }}`;
const toolAppend = (seq: number, data: string): string =>
  `{"type":"tool/result","seq":${seq},"time":0,"data":${data},"surfaceOp":"append"}`;
const toolPrune = (seq: number, target: number, data: string): string =>
  `{"type":"tool/result","seq":${seq},"time":0,"data":${data},"surfaceOp":{"op":"replace","startSeq":${target},"endSeq":${target}},"sourceEventSeqs":[${target}]}`;
const assistant = (seq: number, chunk: string): string =>
  `{"type":"assistant/message","seq":${seq},"time":0,"data":{"turn":0,"step":0,"stream":[{"time":0,"chunk":${chunk}}],"message":{"id":"a","role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"}`;

// ---------------------------------------------------------------------------
// Numbers

const NUMBERS = [
  "0",
  "-0",
  "0.0",
  "-0.0",
  "0e0",
  "1e0",
  "1E2",
  "1.5",
  "-1",
  "9007199254740991",
  "9007199254740992",
  "9007199254740993",
  "-9007199254740993",
  "123456789012345678901234567890",
  "1e400",
  "-1e400",
  "1e-400",
  "5e-324",
  `"NaN"`,
  `"Infinity"`,
  `"-0"`,
  `"0"`,
  "null",
  "true",
  "[]",
  "[0]",
  "{}",
];

/** Logs with one number slot `$N`. */
const NUMBER_SLOTS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["seq", [`{"type":"turn/start","seq":$N,"time":0,"data":{"turn":0}}`]],
  ["time", [`{"type":"turn/start","seq":0,"time":$N,"data":{"turn":0}}`]],
  ["turn", [`{"type":"turn/start","seq":0,"time":0,"data":{"turn":$N}}`]],
  ["step", [
    `{"type":"step/start","seq":0,"time":0,"data":{"turn":0,"step":$N}}`,
  ]],
  [
    "startSeq",
    [
      user(0),
      user(1),
      `{"type":"user/message","seq":2,"time":0,"data":${USER},"surfaceOp":{"op":"replace","startSeq":$N,"endSeq":1},"sourceEventSeqs":[0,1]}`,
    ],
  ],
  [
    "endSeq",
    [
      user(0),
      `{"type":"user/message","seq":1,"time":0,"data":${USER},"surfaceOp":{"op":"replace","startSeq":0,"endSeq":$N},"sourceEventSeqs":[0]}`,
    ],
  ],
  ["source", [user(0), user(1, `,"sourceEventSeqs":[$N]`)]],
  ["streamTime", [
    assistant(0, "null").replace(`"time":0,"chunk"`, `"time":$N,"chunk"`),
  ]],
  [
    "contextWindow",
    [`{"type":"request/context","seq":0,"time":0,"data":{"provider":"p","model":"m","contextWindow":$N}}`],
  ],
  [
    "shadowedSeqs",
    [`{"type":"compaction/prune","seq":0,"time":0,"data":{"shadowedSeqs":[$N]}}`],
  ],
  [
    "windowSeq",
    [`{"type":"turn/start","seq":$N,"time":0,"data":{"turn":0}}`],
  ],
];

Deno.test("fuzz: numbers beyond 2^53, -0, 1e400 and NaN spelled as strings", () => {
  const cases = NUMBER_SLOTS.flatMap(([slot, lines]) =>
    NUMBERS.map((n) => ({
      slot,
      lines: lines.map((l) => l.replaceAll("$N", n)),
    }))
  );
  fuzz("hostile/numbers", cases.length, (_rng, index) => {
    const c = cases[index];
    if (c === undefined) return;
    // A window at 9007199254740991 exercises the last safe seq.
    const base = c.slot === "windowSeq" ? 9007199254740991 : 0;
    judge(c.lines, { base, roundTrip: false });
  });
});

// ---------------------------------------------------------------------------
// Deep nesting

const deepArray = (n: number, leaf = ""): string =>
  `${"[".repeat(n)}${leaf}${"]".repeat(n)}`;
const deepObject = (n: number, leaf = "null"): string =>
  `${`{"a":`.repeat(n)}${leaf}${"}".repeat(n)}`;

const DEEP_SLOTS: ReadonlyArray<
  readonly [string, (d: string, e: string) => string[]]
> = [
  ["whole-line", (d) => [d]],
  [
    "opaque-data",
    (d) => [`{"type":"x/deep","seq":0,"time":0,"data":${d},"ignorable":true}`],
  ],
  [
    "attachment",
    (
      d,
    ) => [
      user(0).replace(
        `{"type":"text","text":"hi"}`,
        `{"type":"image","attachment":${d}}`,
      ),
    ],
  ],
  ["stream-chunk", (d) => [assistant(0, d)]],
  [
    "tool-meta-prune-same",
    (d) => [toolAppend(0, toolData(d)), toolPrune(1, 0, toolData(d))],
  ],
  [
    "tool-meta-prune-differs",
    (d, e) => [toolAppend(0, toolData(d)), toolPrune(1, 0, toolData(e))],
  ],
  [
    "tool-block-extra-prune",
    (
      d,
    ) => [
      toolAppend(0, toolData("", "[]", `,"x":${d}`)),
      toolPrune(
        1,
        0,
        toolData("", `[{"type":"text","text":"p"}]`, `,"x":${d}`),
      ),
    ],
  ],
  [
    "tool-inner-content-prune",
    (
      d,
    ) => [
      toolAppend(0, toolData("", `[{"type":"image","attachment":${d}}]`)),
      toolPrune(1, 0, toolData("")),
    ],
  ],
  [
    "surfaceOp",
    (d) => [user(0).replace(`"surfaceOp":"append"`, `"surfaceOp":${d}`)],
  ],
  ["sourceEventSeqs", (d) => [user(0, `,"sourceEventSeqs":${d}`)]],
  [
    "seq",
    (d) => [`{"type":"turn/start","seq":${d},"time":0,"data":{"turn":0}}`],
  ],
  ["type", (d) => [`{"type":${d},"seq":0,"time":0,"data":{"turn":0}}`]],
  [
    "time",
    (d) => [`{"type":"turn/start","seq":0,"time":${d},"data":{"turn":0}}`],
  ],
  [
    "ignorable",
    (
      d,
    ) => [
      `{"type":"turn/start","seq":0,"time":0,"data":{"turn":0},"ignorable":${d}}`,
    ],
  ],
  ["data", (d) => [`{"type":"turn/start","seq":0,"time":0,"data":${d}}`]],
  [
    "header-reason",
    (
      d,
    ) => [
      `{"type":"request/header","seq":0,"time":0,"data":{"header":{"config":{"provider":"p","model":"m","tools":${d}}},"reason":${d}}}`,
    ],
  ],
  [
    "compaction-error",
    (
      d,
    ) => [
      `{"type":"compaction/end","seq":0,"time":0,"data":{"compactionId":"c","error":${d}}}`,
    ],
  ],
];

Deno.test("fuzz: deeply nested arrays and objects never overflow the stack", () => {
  // 30k is well past the ~8k levels where a recursive walk overflows.
  const depths = config.runs >= 1000
    ? [1000, 10000, 100000, 1000000]
    : [1000, 30000];
  const cases = DEEP_SLOTS.flatMap(([slot, f]) =>
    depths.flatMap((n) => [
      { slot, lines: f(deepArray(n), deepArray(n, "1")) },
      { slot, lines: f(deepObject(n), deepObject(n, "1")) },
      // A toJSON key sends V8's JSON.stringify down its recursive path.
      {
        slot: `${slot}-tojson`,
        lines: f(deepArray(n, `{"toJSON":1}`), deepArray(n, `{"toJSON":2}`)),
      },
    ])
  );
  fuzz("hostile/deep-nesting", cases.length, (_rng, index) => {
    const c = cases[index];
    if (c === undefined) return;
    const outcome = judge(c.lines, { roundTrip: false });
    if (c.slot === "tool-meta-prune-same") assert.equal(outcome, "accepted");
    if (c.slot === "tool-meta-prune-differs") {
      assert.equal(outcome, "ToolResultReplaceChangesMoreThanContent");
    }
  });
});

// ---------------------------------------------------------------------------
// Huge strings

Deno.test("fuzz: 10 MB strings in every kind of slot", () => {
  const size = 10 * 1024 * 1024;
  const escaped = 'ab\\n\\u00e9\\"xyz';
  const big = `"${escaped.repeat(size / 32)}${"x".repeat(size / 2)}"`;
  const digits = `1${"0".repeat(size)}`;
  const cases: ReadonlyArray<readonly [string, string[], string]> = [
    ["text", [user(0).replace(`"text":"hi"`, `"text":${big}`)], "accepted"],
    ["id", [user(0).replace(`"id":"u"`, `"id":${big}`)], "accepted"],
    [
      "unknown-type",
      [`{"type":${big},"seq":0,"time":0,"data":null}`],
      "UnknownEventType",
    ],
    ["envelope-key", [
      `{"type":"turn/start","seq":0,"time":0,"data":{"turn":0},${big}:1}`,
    ], "InvalidEnvelope"],
    ["opaque-data", [
      `{"type":"x/big","seq":0,"time":0,"data":${big},"ignorable":true}`,
    ], "accepted"],
    ["tool-inner-prune", [
      toolAppend(0, toolData("", `[{"type":"text","text":${big}}]`)),
      toolPrune(1, 0, toolData("")),
    ], "accepted"],
    ["tool-meta-prune", [
      toolAppend(0, toolData(big)),
      toolPrune(1, 0, toolData(big)),
    ], "accepted"],
    ["number-digits-time", [
      `{"type":"turn/start","seq":0,"time":${digits},"data":{"turn":0}}`,
    ], "InvalidEnvelope"],
    ["number-digits-seq", [
      `{"type":"turn/start","seq":${digits},"time":0,"data":{"turn":0}}`,
    ], "InvalidSessionSeq"],
    ["whitespace", [
      `{"type":"turn/start",${
        " ".repeat(size)
      }"seq":0,"time":0,"data":{"turn":0}}`,
    ], "accepted"],
  ];
  fuzz("hostile/10mb-strings", cases.length, (_rng, index) => {
    const c = cases[index];
    if (c === undefined) return;
    assert.equal(judge(c[1], { roundTrip: false }), c[2], c[0]);
  });
});

// ---------------------------------------------------------------------------
// Prototype-named keys

const PROTO_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "__defineGetter__",
  "valueOf",
];
const PROTO_VALUES = [
  `{"polluted":true}`,
  `{"data":1,"surfaceOp":"append","sourceEventSeqs":[0]}`,
  "null",
  "1",
  "[]",
  `{"__proto__":{"polluted":true}}`,
];

const PROTO_SLOTS: ReadonlyArray<readonly [string, (kv: string) => string[]]> =
  [
    [
      "envelope",
      (
        kv,
      ) => [`{${kv},"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}`],
    ],
    [
      "data",
      (
        kv,
      ) => [`{"type":"turn/start","seq":0,"time":0,"data":{"turn":0,${kv}}}`],
    ],
    ["message", (kv) => [user(0).replace(`{"id":"u",`, `{${kv},"id":"u",`)]],
    [
      "message-source",
      (kv) => [user(0).replace(`{"kind":"user"}`, `{"kind":"user",${kv}}`)],
    ],
    [
      "content-block",
      (kv) => [user(0).replace(`"text":"hi"}`, `"text":"hi",${kv}}`)],
    ],
    [
      "surfaceOp",
      (
        kv,
      ) => [
        user(0),
        user(1).replace(
          `"surfaceOp":"append"`,
          `"surfaceOp":{"op":"replace","startSeq":0,"endSeq":0,${kv}},"sourceEventSeqs":[0]`,
        ),
      ],
    ],
    [
      "tool-meta-prune-same",
      (
        kv,
      ) => [
        toolAppend(0, toolData(`{${kv}}`)),
        toolPrune(1, 0, toolData(`{${kv}}`)),
      ],
    ],
    [
      "tool-meta-prune-dropped",
      (
        kv,
      ) => [
        toolAppend(0, toolData(`{${kv}}`)),
        toolPrune(1, 0, toolData(`{}`)),
      ],
    ],
    [
      "tool-data-prune",
      (
        kv,
      ) => [
        toolAppend(0, toolData("").replace(`{"turn":0,`, `{${kv},"turn":0,`)),
        toolPrune(1, 0, toolData("").replace(`{"turn":0,`, `{${kv},"turn":0,`)),
      ],
    ],
    ["stream-chunk", (kv) => [assistant(0, `{${kv}}`)]],
    [
      "opaque-data",
      (
        kv,
      ) => [`{"type":"x/y","seq":0,"time":0,"data":{${kv}},"ignorable":true}`],
    ],
    [
      "request-header",
      (
        kv,
      ) => [
        `{"type":"request/header","seq":0,"time":0,"data":{"header":{"config":{"provider":"p","model":"m"},${kv}},"reason":null}}`,
      ],
    ],
  ];

Deno.test("fuzz: __proto__ and constructor keys are data, never prototypes", () => {
  const cases = PROTO_SLOTS.flatMap(([slot, f]) =>
    PROTO_KEYS.flatMap((k) =>
      PROTO_VALUES.map((v) => ({ slot, lines: f(`"${k}":${v}`) }))
    )
  );
  fuzz("hostile/proto-keys", cases.length, (_rng, index) => {
    const c = cases[index];
    if (c === undefined) return;
    const outcome = judge(c.lines);
    if (c.slot === "envelope") assert.equal(outcome, "InvalidEnvelope");
    if (c.slot === "surfaceOp") assert.equal(outcome, "InvalidSurfaceOp");
    if (c.slot === "tool-meta-prune-same") assert.equal(outcome, "accepted");
    if (c.slot === "tool-meta-prune-dropped") {
      assert.equal(outcome, "ToolResultReplaceChangesMoreThanContent");
    }
  });
});

// ---------------------------------------------------------------------------
// Duplicate keys, null prototypes, random junk

Deno.test("fuzz: duplicate JSON keys are read as JSON.parse reads them (last wins)", () => {
  fuzz("hostile/duplicate-keys", config.runs, (rng) => {
    const log = genValidLog(rng, rng.int(1, 12));
    const at = rng.int(0, log.events.length - 1);
    const lines = log.events.map((e) => JSON.stringify(e));
    const target = log.events[at];
    if (target === undefined) return;
    const key = rng.pick(Object.keys(target));
    const junk = JSON.stringify(jsonValue(rng, 2));
    const line = lines[at] ?? "";
    // The duplicate goes first (the original wins) or last (junk wins).
    lines[at] = rng.chance(0.5)
      ? `{${JSON.stringify(key)}:${junk},${line.slice(1)}`
      : `${line.slice(0, -1)},${JSON.stringify(key)}:${junk}}`;
    judge(lines);
  });
});

const nullProto = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return value;
    }
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, v] of Object.entries(value)) out[k] = v;
    return out;
  });

Deno.test("fuzz: null-prototype objects decode like plain ones", () => {
  fuzz("hostile/null-prototype", heavyRuns(3), (rng) => {
    const log = genValidLog(rng, rng.int(1, 20));
    for (const event of log.events) {
      const plain = decodeEventResult(JSON.parse(JSON.stringify(event)));
      const bare = decodeEventResult(nullProto(JSON.stringify(event)));
      assert.equal(Result.isSuccess(bare), Result.isSuccess(plain));
    }
  });
});

Deno.test("fuzz: random JSON values and junk subtrees", () => {
  fuzz("hostile/random-json-event", config.runs, (rng) => {
    const value = jsonValue(rng, 4);
    judge([JSON.stringify(value)]);
  });
  fuzz("hostile/random-envelope", config.runs, (rng) => {
    const value: Record<string, unknown> = {};
    for (const key of ENVELOPE_KEYS) {
      if (rng.chance(0.8)) {
        value[key] = rng.chance(0.5) ? jsonValue(rng, 2) : {
          type: rng.pick([
            "user/message",
            "tool/result",
            "turn/start",
            "x/y",
            "request/header",
          ]),
          seq: rng.pick([0, 1, -1, 0.5]),
          time: 0,
          ignorable: true,
          surfaceOp: rng.pick(["append", {
            op: "replace",
            startSeq: 0,
            endSeq: 0,
          }]),
          sourceEventSeqs: [0],
        }[key];
      }
    }
    judge([JSON.stringify(value)]);
  });
  console.log(countsReport());
});

Deno.test("fuzz: the stack-free JSON writer matches JSON.stringify", () => {
  fuzz("hostile/stack-free-stringify", config.runs, (rng) => {
    const value = {
      a: jsonValue(rng, 5),
      toJSON: rng.chance(0.3) ? jsonValue(rng, 2) : undefined,
      list: [jsonValue(rng, 3), undefined, -0, "\ud800", "\u2028"],
      ["__proto__"]: jsonValue(rng, 2),
      nested: JSON.parse(`{"__proto__":${JSON.stringify(jsonValue(rng, 2))}}`),
    };
    assert.equal(stringifyIteratively(value), JSON.stringify(value));
  });
  console.log(countsReport());
});
