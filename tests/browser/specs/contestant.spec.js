// A contestant with scripts on: register, the problem list, the editor, a run on custom input,
// a submission whose verdict arrives live over SSE, the submission list, logging out.
import {
  test, expect, register, chooseLanguage, typeInEditor, expectVerdict, SOLUTIONS, randomName,
  PASSWORD, login, VERDICT_TIMEOUT, newContext,
} from '../lib/e2e.js';

// Keeps the one judge worker busy for a few seconds (accepted, but sleeps on every test), so
// that the submission after it is still waiting when its page is first rendered.
const SLOW_ACCEPTED = 'import time\ntime.sleep(0.6)\na, b = map(int, input().split())\nprint(a + b)\n';

test('register, edit, run, submit and watch the verdict arrive live, log out', async ({ page, browser, baseURL }) => {
  const { username } = await register(page);

  // The problem list, then A+B.
  await page.goto('/problems');
  await expect(page.locator('h1')).toHaveText('Problems');
  await page.locator('main table.data a[href="/problems/aplusb"]').click();
  await expect(page).toHaveURL(/\/problems\/aplusb$/);
  await expect(page.locator('#problem-title')).toHaveText('A plus B');

  // The editor replaces the textarea.
  await expect(page.locator('#editor-host .cm-editor')).toBeVisible();
  await expect(page.locator('#source')).toBeHidden();
  await chooseLanguage(page, 'python3');
  await typeInEditor(page, SOLUTIONS.aplusbPython);

  // Run on custom input (htmx swaps #run-result; the page stays).
  await page.evaluate(() => { window.__e2eMarker = 'problem-page'; });
  await page.locator('#stdin').fill('1 2\n');
  await page.locator('#run-button').click();
  await expect(page.locator('#run-result #run-stdout')).toHaveText('3', { timeout: VERDICT_TIMEOUT });
  await expect(page.locator('#run-result .verdict')).toHaveText('Accepted');
  expect(await page.evaluate(() => window.__e2eMarker)).toBe('problem-page');

  // Occupy the judge so that our submission is still pending when its page renders.
  const other = await newContext(browser);
  const otherPage = await other.newPage();
  await register(otherPage);
  await otherPage.goto('/problems/aplusb');
  await expect(otherPage.locator('#editor-host .cm-editor')).toBeVisible();
  await chooseLanguage(otherPage, 'python3');
  await typeInEditor(otherPage, SLOW_ACCEPTED);
  await otherPage.locator('#submit-button').click();
  await expect(otherPage).toHaveURL(/\/submissions\/\d+$/);

  // Submit: POST → 303 → /submissions/N, rendered while the verdict is pending.
  const rendered = page.waitForResponse((r) => /\/submissions\/\d+$/.test(r.url()) && r.request().method() === 'GET');
  await page.locator('#submit-button').click();
  const firstHtml = await (await rendered).text();
  await expect(page).toHaveURL(/\/submissions\/\d+$/);
  const id = Number(page.url().match(/(\d+)$/)[1]);
  expect(firstHtml, 'the submission page was first rendered with the verdict still pending').toContain(`sse-connect="/submissions/${id}/live"`);
  expect(firstHtml).not.toContain('id="final-verdict"');
  await page.evaluate(() => { window.__e2eMarker = 'submission-page'; });

  // The verdict arrives over SSE: no reload (the marker survives).
  await expectVerdict(page, 'Accepted');
  expect(await page.evaluate(() => window.__e2eMarker)).toBe('submission-page');
  await expect(page.locator('#verdict-panel table.tests tbody tr').first()).toBeVisible();
  await expect(page.locator('pre.source code')).toHaveText(SOLUTIONS.aplusbPython.trimEnd());

  // The blocker was judged too.
  await expect(otherPage.locator('#final-verdict')).toHaveText('Accepted', { timeout: VERDICT_TIMEOUT });
  await other.close();

  // The list shows it; its link opens the detail.
  await page.locator('header.site nav a[href="/submissions"]').click();
  await expect(page.locator('h1')).toHaveText('My submissions');
  const row = page.locator('main table.data tbody tr').filter({ has: page.locator(`a[href="/submissions/${id}"]`) });
  await expect(row).toHaveCount(1);
  await expect(row.locator('.verdict')).toHaveText('Accepted');
  await expect(row.locator('a[href="/problems/aplusb"]')).toBeVisible();
  await row.locator(`a[href="/submissions/${id}"]`).click();
  await expect(page).toHaveURL(new RegExp(`/submissions/${id}$`));
  await expect(page.locator('h1')).toHaveText(`Submission ${id}`);
  await expectVerdict(page, 'Accepted');

  // The problem list marks it solved.
  await page.goto('/problems');
  await expect(page.locator('main table.data tr', { has: page.locator('a[href="/problems/aplusb"]') }).locator('.solved-mark')).toBeVisible();

  // Log out from the header.
  await page.locator('header.site form[action="/logout"] button').click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.locator('header.site .session a', { hasText: 'Log in' })).toBeVisible();
  await expect(page.locator('header.site .session a[href="/profile"]')).toHaveCount(0);
  await expect(page.locator('header.site nav a[href="/submissions"]')).toHaveCount(0);

  // The account still works.
  await login(page, username, PASSWORD);
});

test('a wrong answer shows the failing sample', async ({ page }) => {
  await register(page);
  await page.goto('/problems/aplusb');
  await expect(page.locator('#editor-host .cm-editor')).toBeVisible();
  await chooseLanguage(page, 'python3');
  await typeInEditor(page, SOLUTIONS.aplusbWrongPython);
  await page.locator('#submit-button').click();
  await expect(page).toHaveURL(/\/submissions\/\d+$/);
  await expectVerdict(page, 'Wrong answer');
  const row = page.locator('#verdict-panel table.tests tbody tr').filter({
    has: page.locator('td:first-child', { hasText: /^sample\/1$/ }),
  });
  await expect(row).toBeVisible();
  await expect(row.locator('.verdict')).toHaveText('Wrong answer');
});

test('a compilation error shows the compiler output', async ({ page }) => {
  await register(page);
  await page.goto('/problems/aplusb');
  await expect(page.locator('#editor-host .cm-editor')).toBeVisible();
  const values = await page.locator('#language option').evaluateAll((os) => os.map((o) => o.value));
  const cpp = values.find((v) => v.startsWith('cpp'));
  expect(cpp, `a C++ language among ${values.join(', ')}`).toBeTruthy();
  await chooseLanguage(page, cpp);
  await typeInEditor(page, SOLUTIONS.cppSyntaxError);
  await page.locator('#submit-button').click();
  await expect(page).toHaveURL(/\/submissions\/\d+$/);
  await expectVerdict(page, 'Compilation error');
  const output = page.locator('#compile-output');
  await expect(output).toBeVisible();
  await expect(output).not.toBeEmpty();
  await expect(output).toContainText('error');
});
