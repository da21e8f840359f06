/**
 * `derive FILE`: the messages a model is sent, read off the surface, each
 * with the node seq it came from; in text, then the answers a crash cut
 * while they streamed (partial answers), which the model is not sent.
 *
 * @module
 */
import { redactAddress } from "../../src/store/redact.ts";
import { deriveMessagesWithSources, partialAnswers } from "@palimpsest/session";
import { type Command, ExitCode } from "../outcome.ts";
import { logCommand } from "../load.ts";
import { messageLine, partialLine } from "../render.ts";

const BLOCK_CHARS = 240;

/** The `derive` command. */
export const deriveCommand: Command = logCommand(
  {
    name: "derive",
    summary: "print the messages the model sees",
    description:
      "Reads and folds FILE and prints the derived messages, one per surface node,\n" +
      "with the node seq each came from. Text output cuts long blocks, and ends\n" +
      "with the answers a crash cut while they streamed (kept in the log, not sent\n" +
      'to the model); --json prints every message in full: [{"seq": 3, "message": {...}}, ...].',
  },
  (log, file) => {
    const messages = deriveMessagesWithSources(log.session.surface);
    const width = String(log.session.surface.nextSeq).length;
    const torn = log.report.tornTail;
    return {
      code: ExitCode.ok,
      json: messages,
      text:
        messages.map(({ seq, message }) =>
          `[${String(seq).padStart(width)}] ${
            messageLine(message, BLOCK_CHARS)
          }\n`
        ).join("") +
        partialAnswers(log.events).map((answer) =>
          `${partialLine(answer, BLOCK_CHARS)}\n`
        ).join(""),
      errText: torn === undefined
        ? ""
        : `warning: ${
          redactAddress(file)
        } has a torn final line (${torn.bytes} bytes at byte ${torn.offset}), not served\n`,
    };
  },
);
