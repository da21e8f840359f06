/**
 * The password fuzz without a server: generated passwords (with `@`, `:`,
 * `/`, `?`, `#`, `%`, spaces and non-ASCII characters) in every address
 * form, given to every CLI command that takes an address (in-process, as
 * text and `--json`) and to the library's address parsing, loading and
 * saving, against a loopback port nothing listens on. No form of the
 * password may appear in any output, message or error field. A few
 * addresses also run as a subprocess under the `cli` task's permissions.
 *
 * The PostgreSQL half (a real server: successful commands, a wrong
 * password) is `tests/postgres/secrets_test.ts`.
 */
import fc from "fast-check";
import { config } from "../_helpers/fuzz.ts";
import { cliTaskFlags, cliWith } from "./_cli.ts";
import {
  address,
  assertHidden,
  checkAddress,
  type Counts,
  FORMS,
  noCounts,
  password,
  sessionFile,
} from "./_secrets.ts";

/** Nothing listens on port 1 of the loopback. */
const UNREACHABLE = "127.0.0.1:1/db";

const RUNS = Math.max(4, Math.round(config.runs / 10));

/**
 * Gives `check` generated passwords in every address form against the
 * unreachable host, `numRuns` times, then prints the counts under `label`.
 */
const fuzzAddresses = async (
  label: string,
  numRuns: number,
  check: (counts: Counts, pw: string, addr: string) => Promise<void>,
): Promise<void> => {
  const counts = noCounts();
  await fc.assert(
    fc.asyncProperty(password, fc.constantFrom(...FORMS), async (pw, form) => {
      const addr = address(form, "fuzz", pw, UNREACHABLE, "s");
      counts.addresses++;
      await check(counts, pw, addr);
    }),
    { seed: config.seed, numRuns },
  );
  console.log(
    `password fuzz (${label}): ${counts.addresses} addresses, ${counts.outputs} outputs checked, ${counts.runs} command runs (${counts.succeeded} exited 0)`,
  );
};

Deno.test("no CLI command nor library error shows a password, whatever the address form", async () => {
  const file = sessionFile();
  await fuzzAddresses(
    "no server",
    RUNS * FORMS.length,
    (counts, pw, addr) => checkAddress(counts, pw, addr, file),
  );
});

Deno.test("the cli task's subprocess shows no password either", async () => {
  const flags = cliTaskFlags();
  await fuzzAddresses("subprocess", 4, async (counts, pw, addr) => {
    for (const json of [[], ["--json"]]) {
      const output = await cliWith(flags, "verify", addr, ...json);
      counts.runs++;
      if (output.code === 0) counts.succeeded++;
      assertHidden(counts, pw, output.stdout, `stdout of ${addr}`);
      assertHidden(counts, pw, output.stderr, `stderr of ${addr}`);
    }
  });
});
