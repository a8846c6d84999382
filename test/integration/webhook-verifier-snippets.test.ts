import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { signWebhookPayload } from '../../src/domain/webhook-signature.js';
import { toolAvailable, toolPath } from '../helpers/external-tools.js';

/**
 * The verifiers docs/api.md shows receivers ("The signature"), run as printed against
 * signatures the service makes: a snippet that drifts from the signing code fails here.
 */
const apiDoc = readFileSync(resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');

/** The first fenced block of `language` after `marker` in the webhook section. */
function snippet(marker: string, language: string): string {
  const section = apiDoc.slice(apiDoc.indexOf('### The signature'));
  const after = section.slice(section.indexOf(marker));
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(after);
  if (match?.[1] === undefined) throw new Error(`no ${language} block after "${marker}" in docs/api.md`);
  return match[1];
}

const SECRET = 'whsec_0123456789abcdef';
const BODY = '{"event":"message.received","inbox":"a@tempinbox.test","message":{"subject":"Grüße"}}';

interface Case {
  name: string;
  secret: string;
  header: string;
  body: string;
  expected: boolean;
}

/** Headers the service signs now, and the ways a forged or stale one differs. */
async function cases(): Promise<Case[]> {
  const now = Math.floor(Date.now() / 1000);
  const good = await signWebhookPayload(SECRET, now, BODY);
  const old = await signWebhookPayload(SECRET, now - 600, BODY);
  const v1 = good.split('v1=')[1] ?? '';
  return [
    { name: 'a fresh signature', secret: SECRET, header: good, body: BODY, expected: true },
    { name: 'another v1 first (rotation)', secret: SECRET, header: `t=${now},v1=${'0'.repeat(64)},v1=${v1}`, body: BODY, expected: true },
    { name: 'a changed body', secret: SECRET, header: good, body: BODY.replace('Grüße', 'Hello'), expected: false },
    { name: 'another secret', secret: 'whsec_another-secret-00', header: good, body: BODY, expected: false },
    { name: 'ten minutes old', secret: SECRET, header: old, body: BODY, expected: false },
    { name: 'a changed timestamp', secret: SECRET, header: good.replace(`t=${now}`, `t=${now - 1}`), body: BODY, expected: false },
    { name: 'no v1', secret: SECRET, header: `t=${now}`, body: BODY, expected: false },
    { name: 'a short v1', secret: SECRET, header: `t=${now},v1=${v1.slice(2)}`, body: BODY, expected: false },
    { name: 'garbage', secret: SECRET, header: 'nonsense', body: BODY, expected: false },
  ];
}

describe('the verifier snippets of docs/api.md', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-verifier-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('Node: accepts what the service signs and refuses the rest', async () => {
    const file = join(dir, 'verify.mjs');
    writeFileSync(file, snippet('In Node:', 'js'));
    const { verifyTempinbox } = (await import(pathToFileURL(file).href)) as {
      verifyTempinbox: (secret: string, header: string, rawBody: Buffer | string) => boolean;
    };
    for (const testCase of await cases()) {
      expect([testCase.name, verifyTempinbox(testCase.secret, testCase.header, Buffer.from(testCase.body))]).toEqual([testCase.name, testCase.expected]);
      expect([testCase.name, verifyTempinbox(testCase.secret, testCase.header, testCase.body)]).toEqual([testCase.name, testCase.expected]);
    }
  });

  // The install needs no python3 (docs/development.md), so a machine may lack it: then the
  // Python snippet cannot run, and the test is skipped with a line saying so (a failure in CI).
  const hasPython = toolAvailable('python3', 'the Python webhook verifier of docs/api.md');
  it.skipIf(!hasPython)('Python: accepts what the service signs and refuses the rest', async () => {
    const file = join(dir, 'verify.py');
    writeFileSync(
      file,
      `${snippet('In Python:', 'python')}\nimport json, sys\nfor case in json.load(sys.stdin):\n    print(json.dumps([case["name"], verify_tempinbox(case["secret"], case["header"], case["body"].encode())]))\n`,
    );
    const all = await cases();
    const run = spawnSync(toolPath('python3'), [file], { input: JSON.stringify(all), encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    const results = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as [string, boolean]);
    expect(results).toEqual(all.map((testCase) => [testCase.name, testCase.expected]));
  });
});
