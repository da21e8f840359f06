/**
 * A fault-injecting TCP relay for PostgreSQL, on loopback: the store under
 * test connects to the relay, the relay to the real server. It reads the
 * wire protocol as it passes (the client's Query, Parse and Bind messages
 * carry the SQL a statement runs; the server's CommandComplete names what
 * finished) and, when an armed {@link Fault} matches a message, cuts the
 * connection: before the message goes on (`drop`), or just after it, with
 * the rest of its extended-query frame, went on (`deliver`). Cutting closes
 * both sockets, so the server sees the client gone at once. A `hold` stalls
 * the message instead: the relay closes the client's side only, keeps the
 * server's open, and sends the message on a while later (as a network that
 * delays a packet past the client's patience), then closes the server's
 * side once it answers.
 *
 * Connections are told apart by the `application_name` of their startup
 * message (the store names its writer, check and pool connections). The
 * relay refuses TLS (it answers `SSLRequest` with `N` itself), so that it
 * can read the messages.
 *
 * @module
 */

/** A protocol message seen by the relay. */
export interface ProxyMessage {
  /** Who sent it. */
  readonly from: "client" | "server";
  /** `startup` for the client's startup packet, else the one-letter type. */
  readonly type: string;
  /** Client: the SQL a Query, Parse or Bind runs; else undefined. */
  readonly sql: string | undefined;
  /** Server: a CommandComplete's tag (`COMMIT`, `INSERT 0 3`); else undefined. */
  readonly tag: string | undefined;
  /** The connection's application name. */
  readonly app: string;
  /** The connection, numbered by the relay from 1 (a pool has several). */
  readonly connection: number;
}

/** One cut of a connection, armed once and spent when it fires. */
export interface Fault {
  /** Whether this message is where to cut. */
  readonly when: (message: ProxyMessage) => boolean;
  /**
   * `drop`: cut before the message goes on. `deliver`: pass it (and, for a
   * client's extended query, its frame through the next Sync), then cut.
   * `hold` (a client's message): close the client's side, then pass the
   * message (with its frame) `holdMillis` later.
   */
  readonly action: "drop" | "deliver" | "hold";
  /** How long a `hold` keeps the message back; 0 by default. */
  readonly holdMillis?: number;
}

/** The relay. */
export interface FaultProxy {
  /** The server's URL with the relay's address. */
  readonly url: string;
  /** Arms faults; each fires at most once. */
  readonly arm: (...faults: ReadonlyArray<Fault>) => void;
  /** Disarms every fault that has not fired. */
  readonly disarm: () => void;
  /** How many faults fired so far. */
  readonly fired: () => number;
  /** Cuts every open connection (as a server restart does). */
  readonly cutAll: () => void;
  /** While set, new connections are closed at once (a server down). */
  readonly refuse: (on: boolean) => void;
  /** Closes the relay and every connection. */
  readonly close: () => Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const decoder = new TextDecoder();

/** The C string at `offset`, and the offset after its NUL. */
const cstring = (bytes: Uint8Array, offset: number): [string, number] => {
  let end = offset;
  while (end < bytes.length && bytes[end] !== 0) end++;
  return [decoder.decode(bytes.subarray(offset, end)), end + 1];
};

const int32 = (bytes: Uint8Array, offset: number): number =>
  new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getInt32(0);

/** `head` followed by `tail`, in a new array. */
const concat = (
  head: Uint8Array,
  tail: Uint8Array,
): Uint8Array<ArrayBuffer> => {
  const joined = new Uint8Array(head.length + tail.length);
  joined.set(head);
  joined.set(tail, head.length);
  return joined;
};

/**
 * The length of the first whole message in `buffer` (its type byte when
 * `typed`, then its int32 length), or undefined while it is incomplete.
 */
const wholeMessage = (buffer: Uint8Array, typed: 0 | 1): number | undefined => {
  if (buffer.length < typed + 4) return undefined;
  const length = int32(buffer, typed) + typed;
  return buffer.length < length ? undefined : length;
};

/**
 * The whole messages read from `conn`, in order (`typed` is asked before
 * each one), with `undefined` after the messages of each read; ends when
 * `conn` does.
 */
async function* messagesOf(
  conn: Deno.Conn,
  typed: () => 0 | 1,
): AsyncGenerator<Uint8Array<ArrayBuffer> | undefined> {
  let buffer = new Uint8Array(0);
  const chunk = new Uint8Array(1 << 16);
  for (;;) {
    const n = await conn.read(chunk);
    if (n === null) return;
    buffer = concat(buffer, chunk.subarray(0, n));
    for (;;) {
      const length = wholeMessage(buffer, typed());
      if (length === undefined) break;
      yield buffer.slice(0, length);
      buffer = buffer.slice(length);
    }
    yield undefined;
  }
}

const writeAll = async (conn: Deno.Conn, bytes: Uint8Array) => {
  let written = 0;
  while (written < bytes.length) {
    written += await conn.write(bytes.subarray(written));
  }
};

/** Writes the messages held back, in one write, and forgets them. */
const flush = async (conn: Deno.Conn, pending: Uint8Array[]) => {
  if (pending.length === 0) return;
  const total = pending.reduce((n, bytes) => n + bytes.length, 0);
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const bytes of pending) {
    joined.set(bytes, offset);
    offset += bytes.length;
  }
  pending.length = 0;
  await writeAll(conn, joined);
};

/**
 * Starts a relay to the server of `targetUrl` on a free loopback port.
 *
 * @param targetUrl A `postgres://` URL of the real server.
 * @returns The relay.
 */
export function startFaultProxy(targetUrl: string): FaultProxy {
  const target = new URL(targetUrl);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String(listener.addr.port);
  let armed: Fault[] = [];
  let fired = 0;
  let connections = 0;
  let refusing = false;
  const open = new Set<() => void>();
  // The relay's waits, each cut short when the relay closes.
  const waits = new Set<() => void>();
  const sleep = (millis: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waits.delete(done);
        resolve();
      };
      const timer = setTimeout(done, millis);
      waits.add(done);
    });

  /** The fault that fires on `message`, removed from the armed ones. */
  const trigger = (message: ProxyMessage): Fault | undefined => {
    const index = armed.findIndex((fault) => fault.when(message));
    if (index < 0) return undefined;
    const [fault] = armed.splice(index, 1);
    fired++;
    return fault;
  };

  const relay = async (client: Deno.TcpConn) => {
    let server: Deno.TcpConn;
    try {
      server = await Deno.connect({
        hostname: target.hostname,
        port: Number(target.port || 5432),
      });
    } catch {
      client.close();
      return;
    }
    client.setNoDelay(true);
    server.setNoDelay(true);
    let cut = false;
    const cutBoth = (_?: void) => {
      if (cut) return;
      cut = true;
      open.delete(cutBoth);
      for (const conn of [client, server]) {
        try {
          conn.close();
        } catch {
          // Already closed.
        }
      }
    };
    open.add(cutBoth);
    const connection = ++connections;
    let app = "";
    const statements = new Map<string, string>();

    /**
     * Closes the client's side, then sends `held` to the server after
     * `millis`; the server's answer finds the client gone, which cuts both.
     */
    const stall = async (held: Uint8Array[], millis: number) => {
      open.delete(cutBoth);
      try {
        client.close();
      } catch {
        // Already closed.
      }
      open.add(cutBoth);
      await sleep(millis);
      if (cut) return;
      await flush(server, held).catch(cutBoth);
      // A server that never answers is cut all the same.
      await sleep(5000);
      cutBoth();
    };

    const clientSide = async () => {
      let started = false;
      // Set by a `deliver` fault on an extended query: cut after its Sync.
      let cutAtSync = false;
      // Set by a `hold` fault on an extended query: hold through its Sync.
      let holding: Fault | undefined;
      const held: Uint8Array[] = [];
      const pending: Uint8Array[] = [];
      for await (const bytes of messagesOf(client, () => started ? 1 : 0)) {
        if (bytes === undefined) {
          await flush(server, pending);
          continue;
        }
        let message: ProxyMessage;
        if (!started) {
          const code = int32(bytes, 4);
          if (code === SSL_REQUEST || code === GSS_REQUEST) {
            await writeAll(client, new Uint8Array([0x4e])); // "N"
            continue;
          }
          started = true;
          let offset = 8;
          while (offset < bytes.length - 1) {
            const [key, next] = cstring(bytes, offset);
            const [value, after] = cstring(bytes, next);
            if (key === "application_name") app = value;
            offset = after;
          }
          message = {
            from: "client",
            type: "startup",
            sql: undefined,
            tag: undefined,
            app,
            connection,
          };
        } else {
          const type = String.fromCharCode(bytes[0] ?? 0);
          let sql: string | undefined;
          if (type === "Q") sql = cstring(bytes, 5)[0];
          if (type === "P") {
            const [name, next] = cstring(bytes, 5);
            statements.set(name, cstring(bytes, next)[0]);
          }
          if (type === "B") {
            const [, next] = cstring(bytes, 5);
            sql = statements.get(cstring(bytes, next)[0]);
          }
          message = {
            from: "client",
            type,
            sql,
            tag: undefined,
            app,
            connection,
          };
        }
        if (holding !== undefined) {
          held.push(bytes);
          if (message.type === "S") {
            return await stall(held, holding.holdMillis ?? 0);
          }
          continue;
        }
        const fault = trigger(message);
        if (fault?.action === "drop") {
          await flush(server, pending);
          return cutBoth();
        }
        if (fault?.action === "hold") {
          await flush(server, pending);
          held.push(bytes);
          if (message.type === "B") {
            holding = fault;
            continue;
          }
          return await stall(held, fault.holdMillis ?? 0);
        }
        pending.push(bytes);
        if (fault !== undefined) {
          if (message.type === "B") cutAtSync = true;
          else return cutBoth(await flush(server, pending));
        }
        if (cutAtSync && message.type === "S") {
          return cutBoth(await flush(server, pending));
        }
      }
      cutBoth();
    };

    const serverSide = async () => {
      const pending: Uint8Array[] = [];
      for await (const bytes of messagesOf(server, () => 1)) {
        if (bytes === undefined) {
          await flush(client, pending);
          continue;
        }
        const type = String.fromCharCode(bytes[0] ?? 0);
        const message: ProxyMessage = {
          from: "server",
          type,
          sql: undefined,
          tag: type === "C" ? cstring(bytes, 5)[0] : undefined,
          app,
          connection,
        };
        const fault = trigger(message);
        if (fault?.action === "drop") {
          await flush(client, pending);
          return cutBoth();
        }
        pending.push(bytes);
        if (fault !== undefined) return cutBoth(await flush(client, pending));
      }
      cutBoth();
    };

    await Promise.all([
      clientSide().catch(cutBoth),
      serverSide().catch(cutBoth),
    ]);
  };

  const accepting = (async () => {
    const relays: Promise<void>[] = [];
    try {
      for await (const conn of listener) {
        if (refusing) {
          conn.close();
          continue;
        }
        relays.push(relay(conn));
      }
    } catch {
      // The listener closed.
    }
    await Promise.all(relays);
  })();

  return {
    url: url.toString(),
    arm: (...faults) => {
      armed.push(...faults);
    },
    disarm: () => {
      armed = [];
    },
    fired: () => fired,
    cutAll: () => {
      for (const cutOne of [...open]) cutOne();
    },
    refuse: (on) => {
      refusing = on;
    },
    close: async () => {
      listener.close();
      for (const cutOne of [...open]) cutOne();
      for (const wake of [...waits]) wake();
      await accepting;
    },
  };
}

/**
 * A fault on a statement of the connections named `app`: the client sends
 * SQL matching `pattern` (in a Query, or the Bind that runs it).
 *
 * @param app The connection's application name.
 * @param pattern What the SQL matches.
 * @param action `drop` or `deliver`.
 * @returns The fault.
 */
export const onStatement = (
  app: string,
  pattern: RegExp,
  action: Fault["action"],
): Fault => ({
  when: (m) =>
    m.from === "client" && m.app === app &&
    (m.type === "Q" || m.type === "B") &&
    m.sql !== undefined && pattern.test(m.sql),
  action,
});

/**
 * A fault on the server's answer to a statement of the connections named
 * `app`: its CommandComplete tag matches `pattern`.
 *
 * @param app The connection's application name.
 * @param pattern What the tag matches.
 * @returns A `drop` fault: the answer never reaches the client.
 */
export const onAnswer = (app: string, pattern: RegExp): Fault => ({
  when: (m) =>
    m.from === "server" && m.app === app && m.type === "C" &&
    m.tag !== undefined && pattern.test(m.tag),
  action: "drop",
});

/**
 * A fault that drops the answer (`CommandComplete`) to the first statement
 * matching `statement` that a connection named `app` sends, on that
 * connection: unlike {@link onAnswer}, no earlier answer of the same tag (a
 * driver's own query while it connects), nor another connection's of the
 * same pool, can take it. Make one per trial: it keeps where the statement
 * went by.
 *
 * @param app The connection's application name.
 * @param statement What the statement's SQL matches.
 * @returns The fault.
 */
export const onAnswerTo = (app: string, statement: RegExp): Fault => {
  let sentOn: number | undefined;
  return {
    when: (m) => {
      if (m.app !== app) return false;
      if (
        sentOn === undefined && m.from === "client" && m.sql !== undefined &&
        statement.test(m.sql)
      ) {
        sentOn = m.connection;
      }
      // The answer on the statement's own connection, not another of the
      // pool's (a heartbeat's, say).
      return sentOn === m.connection && m.from === "server" && m.type === "C";
    },
    action: "drop",
  };
};

/**
 * A fault that refuses the next connection named `app` at its startup.
 *
 * @param app The connection's application name.
 * @returns The fault.
 */
export const onConnect = (app: string): Fault => ({
  when: (m) => m.from === "client" && m.type === "startup" && m.app === app,
  action: "drop",
});
