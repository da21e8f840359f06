/**
 * Rewind on the long agent (`long_agent.ts`, 1M events by default, or the
 * count given as the first argument): a rewind over at least one
 * compaction to a point 10,000 events back (right after a tool result, so
 * nothing is open and every call is paired), against its target of 20 ms,
 * then `deriveMessages` on the rewound surface. Best of a few runs, each
 * from the same session (a session is a value: each run rewinds it anew).
 *
 * @module
 */
import { Effect } from "effect";
import { deriveMessages, Draft, rewind, SessionSeq } from "@palimpsest/session";
import { logEvent } from "@palimpsest/session/internal";
import { longAgent } from "./long_agent.ts";
import { best } from "./common.ts";

const EVENTS = Number(Deno.args[0] ?? 1_000_000);
const BACK = 10_000;
const TARGET_MS = 20;

const { session, compactions } = await Effect.runPromise(
  longAgent("rewind", EVENTS),
);
let to = session.surface.nextSeq - BACK;
while (logEvent(session.surface, SessionSeq.make(to))?.type !== "tool/result") {
  to--;
}
let over = 0;
for (let seq = to + 1; seq < session.surface.nextSeq; seq++) {
  if (
    logEvent(session.surface, SessionSeq.make(seq))?.type === "compaction/end"
  ) over++;
}
if (over === 0) throw new Error("The point is not before a compaction");

const event = Draft.user("edited", { id: "edited" });
let rewound = session;
const rewindMs = best(5, () => {
  rewound = Effect.runSync(rewind(session, { to, event }));
});
const deriveOnly = (() => {
  let min = Infinity;
  for (let i = 0; i < 5; i++) {
    const fresh = Effect.runSync(rewind(session, { to, event }));
    const start = performance.now();
    deriveMessages(fresh.surface);
    min = Math.min(min, performance.now() - start);
  }
  return min;
})();
console.log(
  `rewind on the long agent: ${EVENTS} events, ${compactions} compactions, ` +
    `to seq ${to} (${
      session.surface.nextSeq - to
    } events back, over ${over} compactions): ` +
    `${session.surface.length} nodes -> ${rewound.surface.length}`,
);
console.log(
  `rewind ${rewindMs.toFixed(2)} ms, ${
    (rewindMs / TARGET_MS).toFixed(2)
  } of the target (<= ${TARGET_MS} ms: ${
    rewindMs <= TARGET_MS ? "met" : "MISSED"
  }); deriveMessages after it ${deriveOnly.toFixed(2)} ms`,
);
