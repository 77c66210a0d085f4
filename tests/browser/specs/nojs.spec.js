// The console without JavaScript: plain forms (POST → 303), the textarea instead of the
// editor, Run through the button's formaction, and the submission page reloading itself
// (<noscript><meta http-equiv=refresh>) until the verdict is in.
import { test, expect, register, SOLUTIONS, NOJS_VERDICT_TIMEOUT } from '../lib/e2e.js';

test.use({ javaScriptEnabled: false });

test('register, run and submit with scripts off', async ({ page }) => {
  await register(page);

  await page.goto('/problems/aplusb');
  await expect(page.locator('#source')).toBeVisible();
  await expect(page.locator('#editor-host')).toBeHidden();
  await expect(page.locator('#editor-host .cm-editor')).toHaveCount(0);
  // The language switch has its own button without scripts.
  await expect(page.locator('footer.site form[action="/language"] button[type=submit]')).toBeVisible();

  // Run: the button posts the whole form to /run and the problem page comes back with the output.
  await page.locator('#language').selectOption('python3');
  await page.locator('#source').fill(SOLUTIONS.aplusbPython);
  await page.locator('#stdin').fill('1 2\n');
  const ran = page.waitForResponse((r) => r.url().endsWith('/problems/aplusb/run') && r.request().method() === 'POST');
  await page.locator('#run-button').click();
  expect((await ran).status()).toBe(200);
  await expect(page).toHaveURL(/\/problems\/aplusb\/run$/);
  await expect(page.locator('#run-stdout')).toHaveText('3', { timeout: NOJS_VERDICT_TIMEOUT });
  // The form keeps what was typed.
  await expect(page.locator('#language')).toHaveValue('python3');
  await expect(page.locator('#source')).toHaveValue(SOLUTIONS.aplusbPython);
  await expect(page.locator('#stdin')).toHaveValue('1 2\n');

  // Submit: POST → 303 → /submissions/N.
  const posted = page.waitForResponse((r) => r.url().endsWith('/problems/aplusb/submit') && r.request().method() === 'POST');
  await page.locator('#submit-button').click();
  expect((await posted).status()).toBe(303);
  await expect(page).toHaveURL(/\/submissions\/\d+$/);
  // The page reloads itself every two seconds until the verdict is in.
  await expect(page.locator('#final-verdict')).toHaveText('Accepted', { timeout: NOJS_VERDICT_TIMEOUT });
  // Once done, it stops reloading.
  await expect(page.locator('meta[http-equiv="refresh"]')).toHaveCount(0);
  await expect(page.locator('pre.source code')).toHaveText(SOLUTIONS.aplusbPython.trimEnd());

  // Logging out is a plain form too.
  await page.locator('header.site form[action="/logout"] button').click();
  await expect(page.locator('header.site .session a', { hasText: 'Log in' })).toBeVisible();
});

test('the submission page of a pending verdict asks to be reloaded without scripts', async ({ page, browser, baseURL }) => {
  await register(page);
  await page.goto('/problems/aplusb');
  await page.locator('#language').selectOption('python3');
  // Slow on purpose (sleeps on every test): its page is rendered while it is judged.
  await page.locator('#source').fill('import time\ntime.sleep(0.6)\n' + SOLUTIONS.aplusbPython);
  const rendered = page.waitForResponse((r) => /\/submissions\/\d+$/.test(r.url()) && r.request().method() === 'GET');
  await page.locator('#submit-button').click();
  const html = await (await rendered).text();
  expect(html).toMatch(/<noscript><meta http-equiv="refresh" content="\d+"><\/noscript>/);
  expect(html).toContain('This page reloads every few seconds until the verdict is in.');
  await expect(page.locator('#final-verdict')).toHaveText('Accepted', { timeout: NOJS_VERDICT_TIMEOUT });
});
