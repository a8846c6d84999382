import { describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../src/cli/cli-args.js';

describe('parseCommandLine', () => {
  it('takes a message id that begins with a dash as the argument it is', () => {
    // Ids are base64url, so one in 64 begins with '-'.
    expect(parseCommandLine(['raw', '-5hS0lq8r0cQ2v9bXkzJ1A'])).toMatchObject({ command: 'raw', args: ['-5hS0lq8r0cQ2v9bXkzJ1A'] });
    expect(parseCommandLine(['read', '--json', '-abcdefghijklmnopqrstu', '--html'])).toMatchObject({
      command: 'read',
      args: ['-abcdefghijklmnopqrstu'],
      flags: { json: true, html: true },
    });
  });

  it('gives a flag a value that begins with a dash unchanged', () => {
    expect(parseCommandLine(['link', '--match', '-reset'])).toMatchObject({ command: 'link', flags: { match: '-reset' } });
  });

  it('still reads -h as help and refuses unknown long flags', () => {
    expect(parseCommandLine(['-h']).flags.help).toBe(true);
    expect(() => parseCommandLine(['raw', '--bogus', 'x'])).toThrow(UsageError);
    expect(() => parseCommandLine(['raw'])).toThrow(/takes ID/);
  });
});
