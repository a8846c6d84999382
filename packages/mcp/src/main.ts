#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { TempInboxClient } from '@tempinbox/client';
import { registerTools, type Session } from './register-tools.js';

/** stdout is the protocol: every log line goes to stderr. */
const log = (line: string) => process.stderr.write(`tempinbox-mcp: ${line}\n`);

/** The client of TEMPINBOX_URL; a value that is no http(s) URL ends the start with one line. */
function makeClient(): TempInboxClient {
  try {
    return new TempInboxClient();
  } catch (error) {
    log(`TEMPINBOX_URL ${error instanceof Error ? error.message.replace(/^baseUrl /, '') : String(error)}`);
    process.exit(1);
  }
}

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const client = makeClient();
const session: Session = { client, inboxes: new Map(), last: undefined, log };

// A bug must cost one call, not the agent's whole toolbox.
process.on('uncaughtException', (error) => log(`unexpected error: ${error.stack ?? error.message}`));
process.on('unhandledRejection', (error) => log(`unexpected rejection: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));

const license = process.env.TEMPINBOX_LICENSE;
if (license !== undefined && license !== '') {
  try {
    const redeemed = await client.redeem(license);
    log(`Premium until ${redeemed.premium_until}`);
  } catch (error) {
    log(`TEMPINBOX_LICENSE was not redeemed: ${error instanceof Error ? error.message : String(error)}; going on as a free session`);
  }
}

serveStdio(
  () => {
    const server = new McpServer({ name: 'tempinbox', version }, { capabilities: { tools: {} } });
    registerTools(server, session);
    return server;
  },
  { onerror: (error) => log(`transport error: ${error.message}`) },
);
log(`serving ${client.baseUrl} over stdio`);
