/**
 * The partial answer's kill campaign: an agent whose answers stream slowly
 * (reasoning, text, then a call whose arguments stream; then text) is
 * killed with SIGKILL at points spread over its turn, on JSONL and on
 * PostgreSQL. After each kill: the log opens; the partial batches of each
 * request say a prefix of what the model sent; the repaired log's next
 * request (the crash policy kept or appended the partial answer, in turn)
 * is paired and valid by each provider's published schema; and a turn runs
 * on it.
 */
import {
  checkTranscript,
  deriveMessages,
  layerJsonlStore,
  type PartialAnswerPolicy,
  partialAnswers,
  Session,
  type SessionEvent,
  SessionStore,
} from "@palimpsest/session";
import { runTurn } from "@palimpsest/session/ai";
import { pairToolCalls } from "@palimpsest/session/providers";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { Effect, Layer, Result, Schedule } from "effect";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { tempDir } from "../_helpers/store.ts";
import { postgresTest } from "../_helpers/postgres.ts";
import {
  isPrefixOf,
  loopbackModel,
  partialsOf,
  said,
  streamedPart,
} from "../_helpers/partial_stream.ts";
import {
  handlers,
  PARTS_SENT,
  SCRIPT,
  tools,
} from "../_helpers/partial_child.ts";
import {
  fullBody,
  schemaChecks,
  TARGETS,
} from "../_helpers/provider_schemas.ts";

const child = new URL("../_helpers/partial_child.ts", import.meta.url)
  .pathname;

/**
 * Starts the agent on session `id` and kills it once its model has sent
 * `part` parts.
 */
const killAgent = (where: string, id: string, part: number) =>
  new Promise<void>((resolve, reject) => {
    const agent = spawn(Deno.execPath(), ["run", "-A", child, where, id], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    agent.on("error", reject);
    agent.on("exit", () => resolve());
    let out = "";
    agent.stdout.on("data", (data: Uint8Array) => {
      out += new TextDecoder().decode(data);
      if (out.includes(`sent ${part}\n`)) agent.kill("SIGKILL");
    });
  });

/** Where the kill landed: the kind of the last part a batch holds. */
const landedIn = (events: ReadonlyArray<SessionEvent>): string => {
  const batch = partialsOf(events).at(-1);
  const last = batch?.data.stream.at(-1)?.chunk;
  const type = typeof last === "object" && last !== null
    ? String(Reflect.get(last, "type"))
    : "none";
  const settled = events.at(-1)?.type;
  return settled === "assistant/partial"
    ? `${type} of step ${batch?.data.step}`
    : `after ${settled}`;
};

/** Checks one killed session and runs the next turn on it. */
const afterKill = (
  store: Layer.Layer<SessionStore, unknown>,
  id: string,
  policy: PartialAnswerPolicy,
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sessions = yield* SessionStore;
      // The log opens (a torn write cut).
      // (A killed PostgreSQL writer holds its session until its lease,
      // short here, runs out.)
      const handle = yield* sessions.open(id, {
        mode: "write",
        wholeLog: true,
      }).pipe(
        Effect.retry({
          while: (error) => error._tag === "SessionLocked",
          schedule: Schedule.spaced("100 millis"),
          times: 50,
        }),
      );
      const events = Result.getOrThrow(Session.events(handle.session));
      // Each request's batches say a prefix of what the model sent.
      for (const batch of partialsOf(events)) {
        assert.ok(batch.data.step < SCRIPT.length);
      }
      for (const step of [0, 1]) {
        const batches = partialsOf(events).filter((b) => b.data.step === step);
        const streamed = said(
          batches.flatMap((b) => b.data.stream.map((r) => r.chunk)),
        );
        assert.ok(isPrefixOf(streamed, said(SCRIPT[step] ?? [])));
      }
      const left = partialAnswers(events).length;
      const kind = landedIn(events);
      // The crash policy, then the next request: paired and valid.
      const repaired = yield* sessions.repair(handle, {
        partialAnswer: policy,
      });
      const messages = deriveMessages(repaired.session.surface);
      assert.deepEqual(checkTranscript(messages), []);
      const paired = pairToolCalls(messages);
      assert.deepEqual(paired.repairs, []);
      const checks = schemaChecks();
      for (const target of TARGETS) {
        const body = fullBody(target, paired.messages, yield* tools, undefined);
        assert.deepEqual(checks[target](body), [], target);
      }
      const appended = repaired.closers.some((e) =>
        e.type === "assistant/message"
      );
      if (policy === "keep") assert.equal(appended, false);
      const outcome = yield* runTurn({
        handle,
        toolkit: yield* tools,
        model: { provider: "loopback", model: "m" },
        input: "Go on.",
      }).pipe(
        Effect.provide(
          loopbackModel([[
            ...streamedPart("text", "t", ["Going on."]),
            {
              type: "finish",
              reason: "stop",
              usage: {
                inputTokens: {},
                outputTokens: {},
              },
            },
          ]]),
        ),
      );
      assert.equal(outcome.reason, "completed");
      yield* sessions.close(handle);
      return { kind, left, appended };
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(store, handlers))),
  );

/** Kill points spread over the parts the model sends, one in each span. */
const killPoints = (count: number): number[] =>
  Array.from(
    { length: count },
    (_, i) => 1 + Math.floor((i + Math.random()) * (PARTS_SENT - 1) / count),
  );

const campaign = async (
  store: () => Layer.Layer<SessionStore, unknown>,
  where: string,
  kills: number,
) => {
  const landed = new Map<string, number>();
  let left = 0;
  let appended = 0;
  const points = killPoints(kills);
  for (let i = 0; i < points.length; i++) {
    const id = `k${i}`;
    await killAgent(where, id, points[i] ?? 0);
    const policy: PartialAnswerPolicy = i % 2 === 0 ? "keep" : "append";
    const done = await afterKill(store(), id, policy);
    landed.set(done.kind, (landed.get(done.kind) ?? 0) + 1);
    left += done.left;
    if (done.appended) appended++;
  }
  console.log(
    `${kills} kills; landed in: ${
      [...landed].map(([k, n]) => `${k} ${n}`).join(", ")
    }; ${left} partial answers left, ${appended} appended by repair`,
  );
};

const KILLS = Number(Deno.env.get("PARTIAL_KILLS") ?? 8);

Deno.test("SIGKILL while an answer streams (JSONL): the log opens, batches are a prefix, the next request is valid", async () => {
  const root = tempDir("palimpsest-kill-");
  await campaign(() => layerJsonlStore({ root }), root, KILLS);
});

postgresTest(
  "SIGKILL while an answer streams (PostgreSQL): the log opens, batches are a prefix, the next request is valid",
  async (url) => {
    await campaign(
      () => layerPostgresStore({ url, maxConnections: 2 }),
      url,
      Math.max(4, Math.floor(KILLS / 2)),
    );
  },
);
