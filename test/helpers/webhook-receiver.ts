import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** A request as the receiver saw it. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The address the client connected to (the receiver's side of the connection). */
  localAddress: string;
  /** The TLS server name the client asked for (SNI), or null over plain HTTP. */
  servername: string | null;
}

/** A webhook receiver on 127.0.0.1 (a free port): what a delivery reaches in the tests. */
export interface WebhookReceiver {
  port: number;
  requests: ReceivedRequest[];
  /** TCP connections accepted, also those that never sent a request. */
  readonly connections: number;
  /** Connections closed by the client (or ended) so far. */
  readonly closed: number;
  close(): Promise<void>;
}

/** Answers a received request; the default answers 200 with a short body. */
export type ReceiverHandler = (request: ReceivedRequest, res: ServerResponse) => void;

/**
 * Starts a receiver on 127.0.0.1 only, over HTTP or, given a key and certificate, HTTPS. It
 * reads each body whole (the tests send small ones) before calling `handler`.
 */
export async function startWebhookReceiver(
  handler: ReceiverHandler = (_request, res) => res.end('ok'),
  tls?: { key: string | Buffer; cert: string | Buffer },
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let closed = 0;
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        localAddress: req.socket.localAddress ?? '',
        servername: tls === undefined ? null : ((req.socket as TLSSocket).servername || null),
      };
      requests.push(received);
      handler(received, res);
    });
  };
  const server: Server = tls === undefined ? createHttpServer(onRequest) : createHttpsServer(tls, onRequest);
  const track = (socket: Socket): void => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => {
      closed += 1;
      sockets.delete(socket);
    });
  };
  // Over TLS, count at TCP accept too: a handshake that fails never becomes a secure connection.
  server.on('connection', track);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    get connections() {
      return connections;
    },
    get closed() {
      return closed;
    },
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}
