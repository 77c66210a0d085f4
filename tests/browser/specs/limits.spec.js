// The per-address limits of the auth routes, as a person meets them in the console: the sixth
// registration within the hour from one address is refused with a notice, not a broken page.
import { test, expect, register, randomName, PASSWORD } from '../lib/e2e.js';

test('too many registrations from one address are refused with a notice', async ({ page }) => {
  // This test's own client address (lib/e2e.js) has its whole allowance of five.
  for (let i = 0; i < 5; i += 1) {
    await page.context().clearCookies();
    await register(page);
  }
  await page.context().clearCookies();
  await page.goto('/register');
  const username = randomName();
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('#password_again').fill(PASSWORD);
  const refused = page.waitForResponse((r) => r.url().endsWith('/register') && r.request().method() === 'POST');
  await page.locator('main form button[type=submit]').click();
  expect((await refused).status()).toBe(429);
  await expect(page.locator('main .flash.error[role=alert]')).toHaveText(/too many requests/i);
  // The form keeps the name for a later try; nobody is logged in.
  await expect(page.locator('#username')).toHaveValue(username);
  await expect(page.locator('header.site .session a[href="/profile"]')).toHaveCount(0);
});
