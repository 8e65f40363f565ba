/**
 * A TCP gate in front of a real service (Postgres, Redis, the sandbox), on a port of its own: shut,
 * nothing listens there (a connection is refused, as when the service is down); open, every
 * connection is piped to the service. Tests start a process against the gate's port, then open it.
 */
import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';
import { freePort } from './worker-process.js';

export interface TcpGate {
  port: number;
  /** Starts listening and piping to the service. */
  open(): Promise<void>;
  /** Stops listening and drops the connections piped so far. */
  shut(): Promise<void>;
}

/** A gate to `target` (`127.0.0.1:5432`), shut to begin with. */
export async function tcpGate(target: { host: string; port: number }): Promise<TcpGate> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  return {
    port,
    async open() {
      if (server.listening) return;
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    async shut() {
      if (!server.listening) return;
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
