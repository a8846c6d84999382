import { describe, expect, it } from 'vitest';
import { extractCodes, MAX_CODE_SCAN_CHARS, MAX_CODES } from './extract-codes.js';

describe('extractCodes: shapes', () => {
  it.each([
    ['six digits', 'Your verification code is 482913.', ['482913']],
    ['a letter prefix', 'Your code: G-482913', ['G-482913']],
    ['letter and digit groups', 'Your confirmation code is A7K-3Q9', ['A7K-3Q9']],
    ['three groups', 'Code: Q7M-4PZ-K2R', ['Q7M-4PZ-K2R']],
    ['spaced groups, returned without the space', 'Your code: 123 456', ['123456']],
    ['pairs, returned without the spaces', 'Ihre TAN lautet 71 84 26.', ['718426']],
    ['hyphenated digit groups, returned without the hyphen', 'Kod SMS: 4417-2290', ['44172290']],
    ['single digits in boxes', 'Your sign-in code:\n7 3 0 9 1 5', ['730915']],
    ['four digits', 'Your PIN is 4471.', ['4471']],
    ['eight digits', 'Your OTP is 83920174.', ['83920174']],
    ['upper-case letters and digits', 'Vapor Guard code:\n\nF7K2Q', ['F7K2Q']],
    ['full-width digits', '認証コード：４８２９１３', ['482913']],
    ['a year-shaped code right after its keyword', 'Your code is 2043.', ['2043']],
  ])('%s', (_label, text, expected) => {
    expect(extractCodes('', text)).toEqual(expected);
  });

  it.each([
    ['three digits', 'Your code is 123.'],
    ['nine digits', 'Your code is 123456789.'],
    ['an upper-case word', 'Your code is VERIFY.'],
    ['lower-case letters and digits (a hash)', 'Your code is 9f2e481.'],
    ['unequal digit groups (a phone number)', 'Code: 555-0199'],
  ])('not %s', (_label, text) => {
    expect(extractCodes('', text)).toEqual([]);
  });
});

describe('extractCodes: where the keyword is', () => {
  it.each([
    ['before, same line', 'Ihr Sicherheitscode lautet: 906143', ['906143']],
    ['after, same line', '483920 ist dein Einmalcode für die Anmeldung.', ['483920']],
    ['after, CJK without spaces', '481029是您的登录验证码，请于15分钟内填写。', ['481029']],
    ['on the line above a code on its own line', 'Your verification code:\n\n620 394\n', ['620394']],
    ['two lines above', 'Enter this code to continue:\nIt expires soon.\n\n539021', ['539021']],
    ['on the line below a code on its own line', '290517\nis your one-time code', ['290517']],
    ['in the subject', '', ['193847']],
  ])('%s', (label, text, expected) => {
    const subject = label === 'in the subject' ? '193847 is your Instapic code' : '';
    expect(extractCodes(subject, text)).toEqual(expected);
  });

  it('needs a keyword: a number alone is not a code', () => {
    expect(extractCodes('Welcome', 'Thanks for joining.\n\n482913\n\nSee you soon.')).toEqual([]);
  });

  it('ranks the code next to its keyword first and removes duplicates', () => {
    expect(extractCodes('Your code: 774120', 'Your code: 774120\nBackup code 5521-0932')).toEqual(['774120', '55210932']);
  });

  it.each([
    ['German', 'Ihr Bestätigungscode: 581204', '581204'],
    ['French', 'Votre code de vérification : 724918', '724918'],
    ['Spanish', 'Tu código de verificación es: 639027', '639027'],
    ['Portuguese', 'O seu código de acesso é 7734.', '7734'],
    ['Italian', 'Il tuo codice di verifica è 285013.', '285013'],
    ['Dutch', 'Je verificatiecode is 316274.', '316274'],
    ['Polish', 'Twój kod weryfikacyjny to: 740195', '740195'],
    ['Russian', 'Ваш код подтверждения: 614972', '614972'],
    ['Turkish', 'Doğrulama kodunuz: 529816', '529816'],
    ['Chinese', '您的验证码是：375091，10分钟内有效。', '375091'],
    ['Japanese', '認証コード：593028', '593028'],
    ['Korean', '인증 코드: 638105', '638105'],
  ])('in %s', (_language, text, code) => {
    expect(extractCodes('', text)).toEqual([code]);
  });
});

/** The numbers that are never codes, each as its own case (docs/codes.md, "Never a code"). */
describe('extractCodes: never', () => {
  it.each([
    ['dates', 'Your code expires on 22.11.2026. Code valid until 2026-11-22, or 11/22/2026.'],
    ['an 8-digit date', 'Verification code issued 20261122'],
    ['times', 'Your code is valid until 16:45 (14:32 UTC).'],
    ['years', 'Your code, since 2019: see our 2026 report.'],
    ['prices', 'Code to confirm your payment of $1299 : see app. Total: 4821 €'],
    ['amounts with units', 'The code expires in 1440 minutes; 2048 MB left.'],
    ['phone numbers', "Didn't get the code? Call +1 (415) 555-0100 or 0800 123 4567."],
    ['phone numbers after the keyword line', 'We sent you a code. Call us if it does not arrive:\n\n0800 1234'],
    ['postal codes', 'ZIP code: 94105. Code postal : 75015. Código postal 08001. Kod pocztowy 31042. Posta kodu: 06690.'],
    ['order numbers', 'Use the code in the app. Order number 48213901.'],
    ['order numbers with a sign', 'Your code for order #482913'],
    ['invoice numbers', 'Code client : 55120938. Rechnungsnummer 118392, facture 408213.'],
    ['tracking numbers', 'Tracking code: 6A19283746. Codice di tracciamento: IT83920174. Sendungscode 003404341'],
    ['customer and tax codes', 'Codice fiscale: RSSMRA85T10A562S. Codice cliente: 55102938.'],
    ['promo codes', 'Use code BF2026 at checkout for 30% off. Gutscheincode WINTER10. Промокод SKIDKA15.'],
    ['QR and source code', 'Show the QR code 4821 at the door. Source code 9921 on GitHub.'],
    ['card authorisation codes', 'Authorization code: 048213'],
    ['digits inside URLs', 'Sign in with this link: https://x.example/login?code=482913&id=7781204 (code inside)'],
    ['digits inside e-mail addresses', 'Code sent to user482913@example.com'],
    ['digit groups of a longer number', 'Your code: IBAN DE89 3704 0044 0532 0130 00'],
  ])('%s', (_label, text) => {
    expect(extractCodes('', text)).toEqual([]);
  });
});

describe('extractCodes: bounded and deterministic on hostile input', () => {
  it(`returns at most ${MAX_CODES} codes`, () => {
    const text = Array.from({ length: 20 }, (_, i) => `Backup code ${String(100000 + i * 7919)}`).join('\n');
    expect(extractCodes('', text)).toHaveLength(MAX_CODES);
  });

  it(`reads only the first ${MAX_CODE_SCAN_CHARS} characters`, () => {
    const text = `${'filler text '.repeat(MAX_CODE_SCAN_CHARS / 12 + 10)}\nYour code: 482913`;
    expect(extractCodes('', text)).toEqual([]);
  });

  it.each([
    ['digits and keywords', 'code 1234 '.repeat(400_000)],
    ['one long line of negatives', `${'order '.repeat(200_000)}code 482913`],
    ['lines of candidates', 'A7K-3Q9\n'.repeat(200_000)],
    ['no spaces', '4'.repeat(2_000_000)],
    ['codes between blank lines', '482913\n\n\n\n'.repeat(100_000)],
    ['a run of address characters without "@"', '4a.'.repeat(100_000)],
  ])('stays fast on %s', (_label, text) => {
    const started = performance.now();
    const codes = extractCodes(text, text);
    expect(codes.length).toBeLessThanOrEqual(MAX_CODES);
    // Bounded scan: a few ms here; the limit leaves room for a loaded 2-core machine.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('takes the one strong candidate of a body whose subject announces the code', () => {
    // Seen by hand in the web app: the subject says "code", the body only "Use … to sign in".
    expect(extractCodes('Your sign-in code', 'Use 739201 to sign in. Visit https://example.org/help for help.')).toEqual(['739201']);
    expect(extractCodes('Dein Anmeldecode', 'Mit AB7K9Q meldest du dich an.')).toEqual(['AB7K9Q']);
    // Not when the subject says nothing, when two candidates compete, or a negative word vetoes it.
    expect(extractCodes('Welcome', 'Use 739201 to sign in.')).toEqual([]);
    expect(extractCodes('Your sign-in code', 'Use 739201 or 552190 to sign in.')).toEqual([]);
    expect(extractCodes('Your sign-in code', 'Order 55512345 has shipped.')).toEqual([]);
    expect(extractCodes('Your code', 'Call us on 0800 555 0199 any time.')).toEqual([]);
  });

  it('gives the same answer every time', () => {
    const text = 'Your code: 482913\nBackup code: 5521-0932';
    expect(extractCodes('s', text)).toEqual(extractCodes('s', text));
  });
});
