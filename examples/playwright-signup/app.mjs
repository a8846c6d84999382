// A tiny sign-up app: enter an address, get a 6-digit code by mail (SMTP), type it in.
// The mail goes to SMTP_HOST:SMTP_PORT (a tempinbox server's SMTP port in the test).
import { randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import nodemailer from 'nodemailer';

const PORT = Number(process.env.APP_PORT ?? 3210);
const mailer = nodemailer.createTransport({
  host: process.env.SMTP_HOST ?? '127.0.0.1',
  port: Number(process.env.SMTP_PORT ?? 2525),
  secure: false,
  ignoreTLS: true,
});
/** Codes sent and not yet used, by address; a demo keeps them in memory, at most this many. */
const pending = new Map();
const MAX_PENDING = 1000;
/** A request body larger than this is refused: the forms send two short fields. */
const MAX_BODY_BYTES = 4096;

const escape = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (body) => `<!doctype html><html><head><meta charset="utf-8"><title>Sign up</title></head><body>${body}</body></html>`;

const signupForm = page(`<h1>Sign up</h1>
<form method="post" action="/signup">
  <label>Email <input name="email" type="email" required></label>
  <button type="submit">Sign up</button>
</form>`);

const verifyForm = (email) => page(`<h1>Check your mail</h1>
<p>We sent a code to ${escape(email)}.</p>
<form method="post" action="/verify">
  <input type="hidden" name="email" value="${escape(email)}">
  <label>Code <input name="code" inputmode="numeric" required></label>
  <button type="submit">Verify</button>
</form>`);

async function form(request) {
  let body = '';
  for await (const chunk of request) {
    body += chunk;
    if (body.length > MAX_BODY_BYTES) throw new Error('body too large');
  }
  return new URLSearchParams(body);
}

const server = createServer(async (request, response) => {
  const send = (status, html) => response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  try {
    if (request.method === 'GET' && request.url === '/') return send(200, signupForm);
    if (request.method === 'POST' && request.url === '/signup') {
      const email = (await form(request)).get('email') ?? '';
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value);
      pending.set(email, code);
      await mailer.sendMail({
        from: '"Example App" <no-reply@example.org>',
        to: email,
        subject: 'Your sign-up code',
        text: `Welcome! Your verification code is ${code}. It expires in 10 minutes.`,
      });
      return send(200, verifyForm(email));
    }
    if (request.method === 'POST' && request.url === '/verify') {
      const fields = await form(request);
      const email = fields.get('email') ?? '';
      const ok = pending.get(email) === fields.get('code')?.trim();
      if (ok) pending.delete(email);
      return send(ok ? 200 : 400, page(ok ? `<p role="status">${escape(email)} is verified</p>` : '<p role="alert">Wrong code</p>'));
    }
    return send(404, page('<p>Not found</p>'));
  } catch (error) {
    return send(500, page(`<p role="alert">${escape(String(error.message))}</p>`));
  }
});
server.listen(PORT, '127.0.0.1', () => console.log(`sign-up app on http://127.0.0.1:${PORT}`));
