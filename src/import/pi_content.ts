/**
 * pi content as v3 content: blocks, tool results, and the texts pi itself
 * sends for a command the user ran and for summaries.
 *
 * @module
 * @internal
 */
import type { ContentBlock, ToolResultContentBlock } from "../core/message.ts";
import type { Builder } from "./builder.ts";
import { notCarried } from "./notes.ts";
import { argumentsText, isRecord, str, toolCallBlock } from "./values.ts";

const piText = (u: unknown): ReadonlyArray<ContentBlock> | undefined => {
  if (typeof u === "string") return [{ type: "text", text: u }];
  return undefined;
};

interface Converted_ {
  readonly content: ContentBlock[];
  readonly stream: unknown[];
}

/** pi content as v3 blocks; a thinking signature goes to the stream. */
export const convertBlocks = (
  b: Builder,
  line: number,
  kind: string,
  u: unknown,
): Converted_ => {
  const content: ContentBlock[] = [];
  const stream: unknown[] = [];
  const simple = piText(u);
  if (simple !== undefined) return { content: [...simple], stream };
  if (!Array.isArray(u)) {
    notCarried(b, line, kind, "content is neither text nor a list of blocks");
    return { content, stream };
  }
  for (const block of u) {
    if (!isRecord(block)) continue;
    switch (block.type) {
      case "text":
        content.push({ type: "text", text: str(block.text) ?? "" });
        break;
      case "thinking":
        content.push({ type: "reasoning", text: str(block.thinking) ?? "" });
        if (block.thinkingSignature !== undefined || block.redacted === true) {
          stream.push({
            type: "thinking",
            index: content.length - 1,
            ...(block.thinkingSignature === undefined
              ? {}
              : { signature: block.thinkingSignature }),
            ...(block.redacted === true ? { redacted: true } : {}),
          });
        }
        break;
      case "image":
        content.push({
          type: "image",
          attachment: { mimeType: block.mimeType, data: block.data },
        });
        break;
      case "toolCall":
        content.push(
          toolCallBlock(block.id, block.name, argumentsText(block.arguments)),
        );
        break;
      default:
        notCarried(
          b,
          line,
          kind,
          `content block of type ${JSON.stringify(block.type)} left out`,
        );
    }
  }
  return { content, stream };
};

/** The blocks a tool result may hold. */
export const resultBlocks = (
  content: ReadonlyArray<ContentBlock>,
): ReadonlyArray<ToolResultContentBlock> =>
  content.flatMap((block) =>
    block.type === "text" || block.type === "image" || block.type === "file"
      ? [block]
      : []
  );

/** The text pi sends to the model for a `bashExecution` message. */
export const bashText = (m: Record<string, unknown>): string => {
  let text = `Ran \`${str(m.command) ?? ""}\`\n`;
  const output = str(m.output) ?? "";
  text += output === "" ? "(no output)" : `\`\`\`\n${output}\n\`\`\``;
  if (m.cancelled === true) text += "\n\n(command cancelled)";
  else if (typeof m.exitCode === "number" && m.exitCode !== 0) {
    text += `\n\nCommand exited with code ${m.exitCode}`;
  }
  if (m.truncated === true && typeof m.fullOutputPath === "string") {
    text += `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`;
  }
  return text;
};

/** How pi wraps a compaction summary when it sends it. */
export const compactionText = (summary: string): string =>
  `The conversation history before this point was compacted into the following summary:\n\n<summary>\n${summary}\n</summary>`;

/** How pi wraps a branch summary when it sends it. */
export const branchText = (summary: string): string =>
  `The following is a summary of a branch that this conversation came back from:\n\n<summary>\n${summary}</summary>`;

/** How a turn ends, by pi stop reason. */
export const stopReasons: Readonly<
  Record<
    string,
    "completed" | "max-tokens" | "error" | "aborted" | "interrupted"
  >
> = {
  stop: "completed",
  length: "max-tokens",
  error: "error",
  aborted: "aborted",
  toolUse: "interrupted",
};
