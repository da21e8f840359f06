/**
 * Prints everything a replay decides, for the cross-process determinism
 * test: for each log file given, its surface nodes, replacement count, next
 * seq, derived messages with their node seqs, the transcript check, and the
 * encoded lines of every event. Run as `deno run --allow-read
 * tests/_helpers/replay_print.ts FILE...`.
 *
 * @module
 */
import { Effect, Result } from "effect";
import {
  checkTranscript,
  deriveMessagesWithSources,
  Session,
} from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import { encodeEventLine, readSessionFile } from "@palimpsest/session/jsonl";

const out: string[] = [];
for (const file of Deno.args) {
  const log = await Effect.runPromise(readSessionFile(file));
  const surface = log.session.surface;
  const messages = deriveMessagesWithSources(surface);
  out.push(
    JSON.stringify({
      file: file.slice(file.lastIndexOf("/") + 1),
      nodes: surfaceNodes(surface),
      replacements: surface.replacements,
      nextSeq: surface.nextSeq,
      messages,
      transcript: checkTranscript(messages.map((m) => m.message)),
    }),
  );
  for (const event of Result.getOrThrow(Session.events(log.session))) {
    out.push(encodeEventLine(event).slice(0, -1));
  }
}
await Deno.stdout.write(new TextEncoder().encode(`${out.join("\n")}\n`));
