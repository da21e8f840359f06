/**
 * A loopback HTTP server for the tests' stand-ins of model APIs: `Deno.serve`
 * on 127.0.0.1 at a free port, quiet on start, closed by aborting it, and
 * the answers such a stand-in is scripted with.
 *
 * @module
 */

/** One scripted answer of a model stand-in: text, or a function call. */
export type ScriptedAnswer =
  | { readonly text: string }
  | {
    readonly call: {
      readonly id: string;
      readonly name: string;
      readonly args: string;
    };
  };

/** A running loopback server. */
export interface LocalHttp {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly origin: string;
  /** Stops the server and waits until it has finished. */
  readonly close: () => Promise<void>;
}

/**
 * Starts `handler` on 127.0.0.1 at a free port.
 *
 * @param handler Answers each request.
 * @returns The server's origin and its close.
 */
export const serveLocalHttp = (handler: Deno.ServeHandler): LocalHttp => {
  const stop = new AbortController();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: stop.signal,
    onListen: () => {},
  }, handler);
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    close: async () => {
      stop.abort();
      await server.finished;
    },
  };
};
