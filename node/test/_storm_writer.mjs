// One writer of the claim storm (tests/_helpers/claim_storm.ts in the
// repository), the same program under both runtimes: `node
// _storm_writer.mjs ROOT ID` on the installed package, and `deno run -A
// --config deno.json node/test/_storm_writer.mjs ROOT ID` on the checkout
// (the repository's deno.json maps the package to its sources). It loops
// until killed: open session ID under ROOT for writing (a refusal: wait a few
// milliseconds, try again); once it holds the claim, mark it (`HELD/<pid>`,
// created exclusively) and check that no other live process has a mark;
// append 1 to 3 events, one at a time; remove the mark, then release the
// claim. It prints one line per step:
//
// - `pid PID` first (a writer run under `strace` is killed by this pid);
// - `held`, then `overlap PID` for every other live process marked as
//   holding (two writers at once);
// - `ack SEQ TURN` once an append resolved (its event is `turn/start` with
//   that turn: this pid times 100,000 plus a counter, unique in the storm);
// - `released`; `refused TAG` for a refused open, `failed TAG` for a failed
//   append.
//
// The mark is made after the claim is won and removed before it is
// released, so two live marks at once are two claims at once. A killed
// writer's mark stays; its pid is dead, so it is not counted.
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
