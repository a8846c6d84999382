import { randomInt } from 'node:crypto';

/** Shortest and longest username (docs/api.md "Usernames"). */
export const USERNAME_MIN_LENGTH = 3;
export const USERNAME_MAX_LENGTH = 32;
/** Length of generated usernames: 10 chars of [a-z][a-z0-9]{9} give ~2^51 names. */
export const GENERATED_USERNAME_LENGTH = 10;

/** Names never issued to anyone: role accounts of RFC 2142 and common system names. */
export const RESERVED_USERNAMES: ReadonlySet<string> = new Set([
  'postmaster', 'abuse', 'hostmaster', 'webmaster', 'security', 'noc',
  'mailer-daemon', 'root', 'admin', 'administrator',
]);

const USERNAME_PATTERN = /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/;

/** Lowercases a username as typed; validation is separate. */
export function normalizeUsername(input: string): string {
  return input.trim().toLowerCase();
}

/** True when a normalised username obeys the rules (length, charset, edges, no ".."). */
export function isValidUsername(username: string): boolean {
  return (
    username.length >= USERNAME_MIN_LENGTH &&
    username.length <= USERNAME_MAX_LENGTH &&
    USERNAME_PATTERN.test(username) &&
    !username.includes('..')
  );
}

/** True for names that are never issued. */
export function isReservedUsername(username: string): boolean {
  return RESERVED_USERNAMES.has(username);
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const LETTERS_AND_DIGITS = `${LETTERS}0123456789`;

/** A generated username from a cryptographic RNG: a letter, then nine letters or digits. */
export function generateUsername(pick: (max: number) => number = randomInt): string {
  let name = LETTERS[pick(LETTERS.length)] ?? 'a';
  while (name.length < GENERATED_USERNAME_LENGTH) name += LETTERS_AND_DIGITS[pick(LETTERS_AND_DIGITS.length)] ?? '0';
  return name;
}
