// One Node writer of the claim storm (tests/_helpers/claim_storm.ts in the
// repository): the same loop and lines as tests/store/storm_writer.ts, on
// the installed package. `node _storm_writer.mjs ROOT ID`.
import { Effect, Exit, Scope } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeJsonlStore } from "@palimpsest/session";

const [root = ".", id = "s"] = process.argv.slice(2);
const marks = path.join(root, "HELD");
fs.mkdirSync(marks, { recursive: true });
const say = (line) => console.log(line);
const tagOf = (cause) => {
  const error = cause?.reasons?.[0]?.error;
  return typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Defect";
};
// A process that can still write: alive, and neither a zombie nor exiting
// (a killed writer that has closed its files, and so dropped its flock, has
// PF_EXITING set until its parent reaps it).
const alive = (pid) => {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return false;
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const PF_EXITING = 0x4;
  return fields[0] !== "Z" && fields[0] !== "X" &&
    (Number(fields[6]) & PF_EXITING) === 0;
};
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

say(`pid ${process.pid}`);
const store = await Effect.runPromise(makeJsonlStore({ root }));
let counter = 0;
for (;;) {
  const scope = await Effect.runPromise(Scope.make());
  const opened = await Effect.runPromiseExit(Scope.provide(store.open(id, { mode: "write" }), scope));
  if (Exit.isFailure(opened)) {
    await Effect.runPromise(Scope.close(scope, Exit.void));
    say(`refused ${tagOf(opened.cause)}`);
    await pause(10 + Math.random() * 40);
    continue;
  }
  const mark = path.join(marks, String(process.pid));
  fs.writeFileSync(mark, "", { flag: "wx" });
  say("held");
  for (const name of fs.readdirSync(marks)) {
    const pid = Number(name);
    if (pid !== process.pid && alive(pid)) say(`overlap ${pid}`);
  }
  const n = 1 + Math.floor(Math.random() * 3);
  for (let i = 0; i < n; i++) {
    const turn = process.pid * 100_000 + counter++;
    const appended = await Effect.runPromiseExit(
      store.append(opened.value, [{ type: "turn/start", data: { turn } }]),
    );
    if (Exit.isSuccess(appended)) say(`ack ${appended.value.events[0]?.seq} ${turn}`);
    else say(`failed ${tagOf(appended.cause)}`);
  }
  fs.rmSync(mark);
  await Effect.runPromise(Scope.close(scope, Exit.void));
  say("released");
  await pause(Math.random() * 30);
}
