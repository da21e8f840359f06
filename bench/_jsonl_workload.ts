/**
 * The standard workload (SPEC §7) as JSONL lines, for the load benchmark:
 * cycles of `user/message`, `assistant/message` (text plus one `tool-call`
 * block), `tool/call`, `tool/result` citing the call; every 97 cycles a
 * compaction of the oldest 50 cycles of nodes, and every 37 cycles a prune
 * of the newest tool result. Lines are built as strings, so generating a
 * million events takes about a second.
 *
 * @module
 */
import * as fs from "node:fs";

const HEADER =
  '{"type":"session","version":3,"id":"bench","createdAt":0,"isSeeded":false}\n';

const model = '{"kind":"model","provider":"bench","model":"m"}';

/** Writes a log of at least `events` events to `file`; returns the count. */
export const writeWorkload = (file: string, events: number): number => {
  const fd = fs.openSync(file, "w");
  let out = HEADER;
  let seq = 0;
  let cycle = 0;
  // Surface nodes, oldest first, grouped so compactions never split a pair.
  let nodes: number[] = [];
  const flush = (force: boolean) => {
    if (force || out.length > 1 << 20) {
      fs.writeSync(fd, out);
      out = "";
    }
  };
  const time = () => 1_700_000_000_000 + seq;
  while (seq < events) {
    const c = cycle++;
    const callId = `call-${c}`;
    const u = seq++;
    out +=
      `{"type":"user/message","seq":${u},"time":${time()},"data":{"id":"u${c}","role":"user","content":[{"type":"text","text":"Please look at file ${c} and tell me what it does."}],"source":{"kind":"user"}},"surfaceOp":"append"}\n`;
    const a = seq++;
    out +=
      `{"type":"assistant/message","seq":${a},"time":${time()},"data":{"turn":${c},"step":0,"message":{"id":"a${c}","role":"assistant","content":[{"type":"text","text":"I will read the file first."},{"type":"tool-call","id":"${callId}","name":"read","arguments":"{\\"path\\":\\"src/file${c}.ts\\"}"}],"source":${model}},"stream":[]},"surfaceOp":"append"}\n`;
    const call = seq++;
    out +=
      `{"type":"tool/call","seq":${call},"time":${time()},"data":{"turn":${c},"step":0,"callId":"${callId}","name":"read","arguments":"{\\"path\\":\\"src/file${c}.ts\\"}"}}\n`;
    const r = seq++;
    const resultData = (text: string) =>
      `{"turn":${c},"step":0,"message":{"id":"r${c}","role":"user","content":[{"type":"tool-result","toolCallId":"${callId}","content":[{"type":"text","text":"${text}"}]}],"source":{"kind":"tool","callId":"${callId}"}}}`;
    out += `{"type":"tool/result","seq":${r},"time":${time()},"data":${
      resultData(`export const value${c} = ${c}; // and the rest of the file`)
    },"surfaceOp":"append","sourceEventSeqs":[${call}]}\n`;
    nodes.push(u, a, r);
    if (c % 37 === 36) {
      const prune = seq++;
      out +=
        `{"type":"compaction/prune","seq":${prune},"time":${time()},"data":{"shadowedSeqs":[${r}]}}\n`;
      const replaced = seq++;
      out += `{"type":"tool/result","seq":${replaced},"time":${time()},"data":${
        resultData("[pruned]")
      },"surfaceOp":{"op":"replace","startSeq":${r},"endSeq":${r}},"sourceEventSeqs":[${r}]}\n`;
      nodes[nodes.length - 1] = replaced;
    }
    if (c % 97 === 96 && nodes.length > 150) {
      const id = `k${c}`;
      const start = seq++;
      out +=
        `{"type":"compaction/start","seq":${start},"time":${time()},"data":{"compactionId":"${id}","turn":${c}}}\n`;
      // The previous summary (if any) plus the oldest 50 cycles of nodes.
      const take = nodes.length % 3 === 1 ? 151 : 150;
      const shadowed = nodes.slice(0, take);
      const summary = seq++;
      out +=
        `{"type":"compaction/summary","seq":${summary},"time":${time()},"data":{"compactionId":"${id}","summary":"Earlier the user asked about many files.","shadowedSeqs":[${
          shadowed.join(",")
        }]}}\n`;
      const replacement = seq++;
      const sources = [start, summary, ...shadowed].sort((x, y) => x - y);
      out +=
        `{"type":"user/message","seq":${replacement},"time":${time()},"data":{"id":"s${c}","role":"user","content":[{"type":"text","text":"Earlier the user asked about many files."}],"source":{"kind":"plugin","plugin":"compaction"}},"surfaceOp":{"op":"replace","startSeq":${
          shadowed[0]
        },"endSeq":${shadowed[shadowed.length - 1]}},"sourceEventSeqs":[${
          sources.join(",")
        }]}\n`;
      const end = seq++;
      out +=
        `{"type":"compaction/end","seq":${end},"time":${time()},"data":{"compactionId":"${id}"}}\n`;
      nodes = [replacement, ...nodes.slice(take)];
    }
    flush(false);
  }
  flush(true);
  fs.closeSync(fd);
  return seq;
};
