/**
 * The Node SMTP floor: a bare smtp-server with the options tempinbox's listener uses
 * (no AUTH/STARTTLS, no reverse lookup, same SIZE and client limit) that reads each
 * message and discards it. Prints `{"msg":"listening","port":N}`. Run as its own process.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

const server = new SMTPServer({
  banner: 'smtp floor',
  disabledCommands: ['AUTH', 'STARTTLS'],
  hideSTARTTLS: true,
  authOptional: true,
  size: 10 * 1024 * 1024,
  disableReverseLookup: true,
  maxClients: 1000,
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => undefined);
    stream.once('end', () => callback(null, 'Message accepted'));
  },
});
server.on('error', () => undefined);
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'listening', port: (server.server.address() as AddressInfo).port }));
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
