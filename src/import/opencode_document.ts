/**
 * Reading an `opencode export` document: one JSON record, read whole within
 * the record bound (a larger file is refused as a line too long would be),
 * the lines its ids are written on (so that the report and `import/lines`
 * name source lines), and, for a document that is not JSON, the line of the
 * first character that breaks it.
 *
 * @module
 * @internal
 */
import * as fs from "node:fs";
import * as Result from "effect/Result";
import { ioError } from "../fs/io.ts";
import {
  type ImportError,
  ImportLineNotJson,
  ImportLineTooLong,
  ImportNotASession,
} from "./errors.ts";
import type { RecordReadOptions } from "./lines.ts";

/** The lines of every `"id": "…"` in the text, by id, in order. */
export const idLines = (text: string): Map<string, number[]> => {
  const lines = new Map<string, number[]>();
  let line = 1;
  let from = 0;
  for (const match of text.matchAll(/"id"\s*:\s*"([^"\\]*)"/g)) {
    for (
      let i = text.indexOf("\n", from);
      i !== -1 && i < match.index;
      i = text.indexOf("\n", i + 1)
    ) {
      line += 1;
      from = i + 1;
    }
    const id = match[1] ?? "";
    const seen = lines.get(id);
    if (seen === undefined) lines.set(id, [line]);
    else seen.push(line);
  }
  return lines;
};

/** The 1-based line of a character offset. */
const lineAt = (text: string, offset: number): number => {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset;) {
    line += 1;
    i = text.indexOf("\n", i + 1);
  }
  return line;
};

const literal = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
// JSON strings may not hold raw control characters.
// deno-lint-ignore no-control-regex
const string = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/**
 * The offset of the first character that makes `text` invalid JSON (its
 * length when it ends too soon), by a scan without recursion. Only called
 * once `JSON.parse` refused the text.
 */
const errorOffset = (text: string): number => {
  const stack: string[] = [];
  let expect:
    | "value"
    | "value-or-end"
    | "key"
    | "key-or-end"
    | "colon"
    | "after" = "value";
  let i = 0;
  const token = (re: RegExp): boolean => {
    re.lastIndex = i;
    if (!re.test(text)) return false;
    i = re.lastIndex;
    return true;
  };
  for (;;) {
    while (i < text.length && " \t\n\r".includes(text.charAt(i))) i += 1;
    if (i >= text.length) return text.length;
    const c = text.charAt(i);
    const top = stack[stack.length - 1];
    if (expect === "after") {
      if (top === undefined) return i;
      if (c === ",") {
        i += 1;
        expect = top === "{" ? "key" : "value";
      } else if ((c === "}" && top === "{") || (c === "]" && top === "[")) {
        stack.pop();
        i += 1;
      } else return i;
    } else if (expect === "colon") {
      if (c !== ":") return i;
      i += 1;
      expect = "value";
    } else if (expect === "key" || expect === "key-or-end") {
      if (c === "}" && expect === "key-or-end") {
        stack.pop();
        i += 1;
        expect = "after";
      } else if (token(string)) expect = "colon";
      else return i;
    } else if (c === "]" && expect === "value-or-end") {
      stack.pop();
      i += 1;
      expect = "after";
    } else if (c === "{" || c === "[") {
      stack.push(c);
      i += 1;
      expect = c === "{" ? "key-or-end" : "value-or-end";
    } else if (token(string) || token(literal)) expect = "after";
    else return i;
  }
};

export const readDocument = (
  file: string,
  options: RecordReadOptions,
): Result.Result<{ text: string; value: unknown }, ImportError> => {
  let text: string;
  try {
    const size = fs.statSync(file).size;
    if (size > options.maxLineBytes) {
      return Result.fail(
        options.recover
          ? new ImportNotASession({
            from: "opencode",
            line: 1,
            expected: "an `opencode export` document within the record bound",
          })
          : new ImportLineTooLong({
            line: 1,
            bytes: size,
            limit: options.maxLineBytes,
          }),
      );
    }
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    return Result.fail(
      ioError("read", file, error),
    );
  }
  try {
    return Result.succeed({ text, value: JSON.parse(text) });
  } catch {
    if (options.recover) {
      return Result.fail(
        new ImportNotASession({
          from: "opencode",
          line: 1,
          expected: "an `opencode export` JSON document",
        }),
      );
    }
    const line = lineAt(text, errorOffset(text));
    const start = text.split("\n")[line - 1] ?? "";
    return Result.fail(
      new ImportLineNotJson({
        line,
        excerpt: start.length > 60 ? `${start.slice(0, 57)}...` : start,
      }),
    );
  }
};
