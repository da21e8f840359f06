/**
 * More PostgreSQL servers for the tests of the sharded store: throwaway
 * clusters beside the one `PALIMPSEST_PG_URL` names, each started with
 * Debian's `pg_virtualenv` on a port of its own (as `tools/with_postgres.sh`
 * starts the first), and dropped when the test file stops them or, at the
 * latest, when this process exits (the cluster lives as long as a `cat`
 * reading this process's pipe).
 *
 * `PALIMPSEST_PG_EXTRA_URLS` (space-separated superuser URLs) names servers
 * to use instead of starting clusters.
 *
 * @module
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** A server started for the tests. */
export interface Cluster {
  /** Its superuser URL. */
  readonly url: string;
  /** Drops it (nothing for a server given by `PALIMPSEST_PG_EXTRA_URLS`). */
  readonly stop: () => Promise<void>;
}

const freePort = (): number => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
};

// pg_virtualenv exports PG* for its own cluster: a nested one must not see
// the outer one's (its port, its config root).
const environment = (port: number): Record<string, string> => {
  const env = Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([key]) =>
      !key.startsWith("PG")
    ),
  );
  return { ...env, PGPORT: String(port) };
};

// The inner command writes the URL to a file and then waits on stdin; the
// cluster's own output goes to a log (never to a pipe this process may
// close before the cluster's cleanup writes to it).
const script = `set -eu
pg_virtualenv -t -o max_connections=300 bash -c '
  printf "postgres://%s:%s@127.0.0.1:%s/%s\\n" "$PGUSER" "$PGPASSWORD" "$PGPORT" "$PGDATABASE" > "$0.tmp"
  mv "$0.tmp" "$0"
  exec cat > /dev/null' "$1" > "$2" 2>&1`;

/**
 * Starts one throwaway cluster with `pg_virtualenv` on a free port.
 *
 * @returns The cluster, once it accepts connections.
 */
export async function startCluster(): Promise<Cluster> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-pg-"));
  const urlFile = path.join(folder, "url");
  const log = path.join(folder, "log");
  const child = new Deno.Command("bash", {
    args: ["-c", script, "bash", urlFile, log],
    env: environment(freePort()),
    clearEnv: true,
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  child.unref();
  const stop = async () => {
    await child.stdin.close().catch(() => {});
    child.ref();
    await child.status;
    fs.rmSync(folder, { recursive: true, force: true });
  };
  const deadline = Date.now() + 120_000;
  while (!fs.existsSync(urlFile)) {
    const exited = await Promise.race([
      child.status.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 100)),
    ]);
    if (exited || Date.now() > deadline) {
      const output = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
      await stop();
      throw new Error(`pg_virtualenv did not start a cluster:\n${output}`);
    }
  }
  return { url: fs.readFileSync(urlFile, "utf8").trim(), stop };
}

/**
 * `n` more servers: the ones `PALIMPSEST_PG_EXTRA_URLS` names, else
 * clusters started at once.
 *
 * @param n How many.
 * @returns The servers.
 */
export async function extraClusters(n: number): Promise<Cluster[]> {
  const given = (Deno.env.get("PALIMPSEST_PG_EXTRA_URLS") ?? "").split(/\s+/)
    .filter((url) => url !== "");
  if (given.length >= n) {
    return given.slice(0, n).map((url) => ({ url, stop: async () => {} }));
  }
  const started = await Promise.allSettled(
    Array.from({ length: n }, () => startCluster()),
  );
  const clusters = started.flatMap((s) =>
    s.status === "fulfilled" ? [s.value] : []
  );
  const failed = started.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    await Promise.all(clusters.map((cluster) => cluster.stop()));
    throw failed.reason;
  }
  return clusters;
}
