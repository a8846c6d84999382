/**
 * A small multipart message (a text part and a 4-byte attachment) for the parse-pool tests.
 * `poison` sets the `X-Test-Poison` header that test/fixtures/workers/poison-parse-worker.ts
 * obeys (crash, run out of memory, throw, or be slow), never read by the product's worker.
 */
export function poisonTestMessage(subject: string, options: { to?: string; poison?: string } = {}): string {
  return [
    'From: Sender <sender@example.org>',
    ...(options.to === undefined ? [] : [`To: ${options.to}`]),
    `Subject: ${subject}`,
    ...(options.poison === undefined ? [] : [`X-Test-Poison: ${options.poison}`]),
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary=b',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    `body of ${subject}`,
    '--b',
    'Content-Type: application/octet-stream; name=a.bin',
    'Content-Disposition: attachment; filename=a.bin',
    'Content-Transfer-Encoding: base64',
    '',
    'AAECAw==',
    '--b--',
    '',
  ].join('\r\n');
}
