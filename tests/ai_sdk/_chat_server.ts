/**
 * The chat server of the browser test, as its own process so that the test
 * can SIGKILL it mid-answer: `deno run -A _chat_server.ts ROOT WEB PORT`
 * serves, on 127.0.0.1:PORT (0: any free port),
 *
 * - `GET /` and `GET /page.js`: the chat page, `index.html` and the
 *   script the test bundled, from the folder WEB;
 * - `POST /api/chat`: the AI SDK's client transport sending a message. A
 *   turn of `runTurn` on session `id` (a JSONL store in ROOT) starts in the
 *   background against a loopback model that streams {@link ANSWER} slowly,
 *   and the response is the turn's answer read from the log
 *   (`uiStreamResponse(uiMessageChunks(id, { fromSeq }))`);
 * - `GET /api/chat/:id/stream`: the transport's resume, the session's last
 *   turn from its `turn/start`, live or finished (204 when there is none).
 *
 * The answer's `finish` carries `messageMetadata: { interrupted: true }`
 * when the turn ended interrupted, so that the page can mark it. On start
 * it repairs every session of ROOT with the default policy (a partial answer
 * kept for people, not sent to the model), as a restarted server does after
 * a crash, then prints `listening PORT`.
 *
 * @module
 */
import { layerJsonlStore, SessionStore } from "@palimpsest/session";
import { runTurn } from "@palimpsest/session/ai";
import { uiMessageChunks, uiStreamResponse } from "@palimpsest/session/ai-sdk";
import type { UIMessageChunk } from "ai";
import { Deferred, Effect, Layer, ManagedRuntime, Stream } from "effect";
import { Toolkit } from "effect/ai";
import { loopbackModel, streamedPart } from "../_helpers/partial_stream.ts";

/** The words of the model's answer, each followed by a space. */
export const WORDS = 150;
/** The model's answer: `w0 w1 … w149 `. */
export const ANSWER: string = Array.from(
  { length: WORDS },
  (_, i) => `w${i} `,
).join("");
/** The wait between two parts the model sends: the answer takes seconds. */
const GAP_MS = 40;

const usage = { inputTokens: {}, outputTokens: {} };
const script = [
  [
    ...streamedPart("text", "t", ANSWER.split(/(?<= )/)),
    { type: "finish", reason: "stop", usage },
  ] as const,
];

const tools = Toolkit.make();

/** The text of the last user message a transport sent. */
const lastUserText = (body: unknown): string => {
  const messages = typeof body === "object" && body !== null
    ? Reflect.get(body, "messages")
    : undefined;
  const last: unknown = Array.isArray(messages) ? messages.at(-1) : undefined;
  const parts = typeof last === "object" && last !== null
    ? Reflect.get(last, "parts")
    : undefined;
  return Array.isArray(parts)
    ? parts.map((p) => p?.type === "text" ? String(p.text) : "").join("")
    : "";
};

const chatId = (body: unknown): string => {
  const id = typeof body === "object" && body !== null
    ? Reflect.get(body, "id")
    : undefined;
  return typeof id === "string" ? id : "chat";
};

if (import.meta.main) {
  const [root = "", web = "", port = "0"] = Deno.args;
  const store = layerJsonlStore({ root });
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(store, loopbackModel(script, GAP_MS)),
  );

  /** The seq of the session's last `turn/start`, if it has one. */
  const lastTurnStart = (id: string) =>
    Effect.gen(function* () {
      const sessions = yield* SessionStore;
      if (!(yield* sessions.list()).includes(id)) return undefined;
      const handle = yield* sessions.open(id, { mode: "read" });
      const events = yield* sessions.events(handle);
      return events.findLast((e) => e.type === "turn/start")?.seq;
    }).pipe(Effect.scoped);

  /** Whether the session's last turn ended interrupted. */
  const interrupted = (id: string) =>
    Effect.gen(function* () {
      const sessions = yield* SessionStore;
      const handle = yield* sessions.open(id, { mode: "read" });
      const events = yield* sessions.events(handle);
      const end = events.findLast((e) => e.type === "turn/end");
      return end?.type === "turn/end" &&
        end.data.reason.kind === "interrupted";
    }).pipe(Effect.scoped);

  /** The answer from `fromSeq` as the transport's response. */
  const answer = (id: string, fromSeq: number): Response =>
    uiStreamResponse(
      uiMessageChunks(id, { fromSeq, waitForSession: true }).pipe(
        Stream.mapEffect((chunk): Effect.Effect<UIMessageChunk, unknown> =>
          chunk.type === "finish"
            ? Effect.map(
              interrupted(id).pipe(Effect.provide(store)),
              (cut) =>
                cut
                  ? { ...chunk, messageMetadata: { interrupted: true } }
                  : chunk,
            )
            : Effect.succeed(chunk)
        ),
        Stream.provide(store),
      ),
    );

  /** Starts a turn in the background; resolves with its first seq. */
  const startTurn = (id: string, input: string) =>
    runtime.runPromise(Effect.gen(function* () {
      const from = yield* Deferred.make<number>();
      yield* Effect.forkDetach(Effect.scoped(Effect.gen(function* () {
        const sessions = yield* SessionStore;
        const handle = (yield* sessions.list()).includes(id)
          ? yield* sessions.open(id, { mode: "write" })
          : yield* sessions.create({ id, createdAt: 0, isSeeded: false });
        yield* Deferred.succeed(from, handle.session.surface.nextSeq);
        yield* runTurn({
          handle,
          toolkit: yield* tools,
          model: { provider: "loopback", model: "slow" },
          input,
        });
      })));
      return yield* Deferred.await(from);
    }));

  // What a crash left open is closed before anything is served.
  await runtime.runPromise(Effect.gen(function* () {
    const sessions = yield* SessionStore;
    for (const id of yield* sessions.list()) {
      yield* Effect.scoped(
        Effect.flatMap(
          sessions.open(id, { mode: "write" }),
          (h) => sessions.repair(h),
        ),
      );
    }
  }));

  const files: Record<string, readonly [string, string]> = {
    "/": ["index.html", "text/html; charset=utf-8"],
    "/page.js": ["page.js", "text/javascript; charset=utf-8"],
  };
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: Number(port),
    onListen: ({ port }) => console.log(`listening ${port}`),
  }, async (request) => {
    const url = new URL(request.url);
    const file = files[url.pathname];
    if (request.method === "GET" && file !== undefined) {
      return new Response(await Deno.readFile(`${web}/${file[0]}`), {
        headers: { "content-type": file[1] },
      });
    }
    if (request.method === "POST" && url.pathname === "/api/chat") {
      const body: unknown = await request.json();
      const id = chatId(body);
      return answer(id, await startTurn(id, lastUserText(body)));
    }
    const resume = url.pathname.match(/^\/api\/chat\/([^/]+)\/stream$/);
    if (request.method === "GET" && resume?.[1] !== undefined) {
      const id = decodeURIComponent(resume[1]);
      const from = await runtime.runPromise(lastTurnStart(id));
      return from === undefined
        ? new Response(null, { status: 204 })
        : answer(id, from);
    }
    return new Response("not found", { status: 404 });
  });
  await server.finished;
}
