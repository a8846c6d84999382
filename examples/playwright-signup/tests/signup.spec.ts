import { expect, test } from '@playwright/test';
import { TempInboxClient } from '@tempinbox/client';

test('signs up with the code from the mail', async ({ page }) => {
  // A fresh address for this test; TEMPINBOX_URL says which tempinbox server.
  const inbox = await new TempInboxClient().createInbox();

  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page.getByText('Check your mail')).toBeVisible();

  // The oldest message with a code that arrived in this inbox: no polling loop, no sleep.
  const { code, message } = await inbox.waitForCode({ timeout: 30_000 });
  expect(message.subject).toBe('Your sign-up code');

  await page.getByLabel('Code').fill(code);
  await page.getByRole('button', { name: 'Verify' }).click();
  await expect(page.getByRole('status')).toHaveText(`${inbox.address} is verified`);
});
