import { join } from 'node:path';
import { startChildServer, type ChildServer } from './child-server.js';
import { ROOT } from './service-process.js';

/** A running floor server. */
export interface FloorServer {
  server: ChildServer;
  pid: number;
  port: number;
}

/** Starts one of the floor scripts under tsx (TypeScript is compiled once, at load). */
async function startFloor(script: string): Promise<FloorServer> {
  const server = await startChildServer({
    command: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'bench', script)],
    cwd: ROOT,
    env: { PATH: process.env.PATH, NODE_ENV: 'production' },
    isReady: (line) => line.msg === 'listening',
  });
  return { server, pid: server.pid, port: Number(server.ready.port) };
}

/** The bare smtp-server floor (accepts and discards). */
export function startSmtpFloor(): Promise<FloorServer> {
  return startFloor('floor-smtp-server.ts');
}

/** The bare node:http floor (answers `/<bytes>` with a body of that size). */
export function startHttpFloor(): Promise<FloorServer> {
  return startFloor('floor-http-server.ts');
}
