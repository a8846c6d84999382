import { createConnection, createServer, type Socket } from 'node:net';

/** A loopback TCP relay whose link can be cut and restored, to make a server "unreachable". */
export interface TcpProxy {
  /** The local port clients connect to instead of the target. */
  port: number;
  /** Drops every relayed connection and refuses new ones (each is reset at once). */
  cut: () => void;
  /** Accepts and relays new connections again. */
  restore: () => void;
  /** Connections relayed so far (to show the client really went through the proxy). */
  accepted: () => number;
  /** Stops listening and drops every connection. */
  close: () => Promise<void>;
}

/**
 * Starts a relay from 127.0.0.1:<random port> to `targetHost:targetPort`. Tests put it between
 * a server and the shared PostgreSQL: cutting it is a database outage for that server alone,
 * while the real database keeps serving everyone else's tests.
 */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  let count = 0;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    // A reset while cut is the point of the exercise, not a test failure.
    socket.on('error', () => undefined);
  };
  const server = createServer((client) => {
    track(client);
    if (down) {
      client.resetAndDestroy();
      return;
    }
    count += 1;
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    // Either side ending takes the other with it, as a broken link would.
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  const dropAll = () => {
    for (const socket of open) socket.destroy();
    open.clear();
  };
  return {
    port: address.port,
    cut: () => {
      down = true;
      dropAll();
    },
    restore: () => {
      down = false;
    },
    accepted: () => count,
    close: async () => {
      down = true;
      dropAll();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
