/**
 * `branches FILE`: the branches a log's rewinds left, as a tree: where each
 * leaves the one before it, its first and last events, its turns, the text
 * of its first user message, and which one is current. Going back to a
 * branch is `rewind FILE --to TIP`.
 *
 * @module
 */
import { redactAddress } from "../../src/store/redact.ts";
import { branchesOf, branchTree } from "../../src/history/rewind.ts";
import { type Command, okOutcome } from "../outcome.ts";
import { logCommand } from "../load.ts";
import { count } from "../render.ts";

/** The longest first user text a line shows. */
const TEXT = 60;
/** Deeper branches are indented no further. */
const MAX_INDENT = 20;

/** The `branches` command. */
export const branchesCommand: Command = logCommand(
  {
    name: "branches",
    summary: "list the branches a log's rewinds left, as a tree",
    description:
      "Reads and folds FILE and lists its branches: the events from the start,\n" +
      "then one run per rewind, each under the branch it leaves, with its first\n" +
      "and last seq, the point it goes on from, its turns and the text of its\n" +
      "first user message; the current one is marked. Back to a branch is\n" +
      '"rewind FILE --to TIP".',
  },
  (log, file) => {
    const tree = branchTree(branchesOf(log.events));
    const json = {
      branches: tree.map(({ branch, depth }) => ({
        fromSeq: branch.fromSeq,
        leavesAt: branch.leavesAt ?? null,
        tipSeq: branch.tipSeq,
        depth,
        turns: branch.turns,
        firstUserText: branch.firstUserText ?? null,
        current: branch.current,
      })),
    };
    const lines = [
      `${redactAddress(file)}: ${tree.length} ${
        tree.length === 1 ? "branch" : "branches"
      }`,
      ...tree.map(({ branch: b, depth }) => {
        const text = b.firstUserText;
        return `${"  ".repeat(1 + Math.min(depth, MAX_INDENT))}${
          b.current ? "* " : ""
        }${b.fromSeq}..${b.tipSeq}${
          b.leavesAt === undefined ? "" : ` (after ${b.leavesAt})`
        }, ${count(b.turns.length, "turn")}${
          text === undefined ? "" : `: ${
            JSON.stringify(
              text.length > TEXT ? `${text.slice(0, TEXT)}…` : text,
            )
          }`
        }${b.current ? " (current)" : ""}`;
      }),
    ];
    return okOutcome(json, lines);
  },
);
