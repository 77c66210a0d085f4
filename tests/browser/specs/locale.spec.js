// The interface language: from Accept-Language, then the footer's switch (a cookie), which
// submits itself when scripts are on.
import { test, expect, register, login, newContext, quickSubmit, SOLUTIONS, VERDICT_TIMEOUT } from '../lib/e2e.js';

test.describe('a Japanese browser', () => {
  test.use({ locale: 'ja-JP' });

  test('gets Japanese, and the footer switch changes to Chinese', async ({ page }) => {
    await page.goto('/problems');
    await expect(page.locator('html')).toHaveAttribute('lang', 'ja');
    await expect(page.locator('h1')).toHaveText('問題一覧');
    await expect(page.locator('header.site .session a', { hasText: 'ログイン' })).toBeVisible();
    await expect(page.locator('#language-switch')).toHaveValue('ja');

    // Autosubmits on change (no button with scripts on).
    await expect(page.locator('footer.site form[action="/language"] button')).toBeHidden();
    await page.locator('#language-switch').selectOption('zh-CN');
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    await expect(page.locator('h1')).toHaveText('题目列表');
    await expect(page).toHaveURL(/\/problems$/);
    await expect(page.locator('#language-switch')).toHaveValue('zh-CN');

    // The choice is remembered (a cookie) over Accept-Language, on every page.
    await page.goto('/login');
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    await expect(page.locator('h1')).toHaveText('登录');

    // And back to English.
    await page.locator('#language-switch').selectOption('en');
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.locator('h1')).toHaveText('Log in');
    await expect(page).toHaveURL(/\/login$/);
  });

  test('sees verdicts and the submission page in Japanese', async ({ page }) => {
    await register(page);
    await page.goto('/problems/aplusb');
    await expect(page.locator('html')).toHaveAttribute('lang', 'ja');
    await expect(page.locator('#run-button')).toHaveText('実行');
    const id = await quickSubmit(page, 'aplusb', 'python3', SOLUTIONS.aplusbPython);
    await page.goto(`/submissions/${id}`);
    await expect(page.locator('h1')).toHaveText(`提出 ${id}`);
    await expect(page.locator('#final-verdict')).toHaveText('正解', { timeout: VERDICT_TIMEOUT });
  });
});

test.describe('a browser without a language we have', () => {
  test.use({ locale: 'fr-FR' });

  test('gets English', async ({ page }) => {
    await page.goto('/problems');
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.locator('h1')).toHaveText('Problems');
  });
});

test('a logged-in choice is kept with the account, on another browser too', async ({ page, browser }) => {
  const { username, password } = await register(page);
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await page.locator('#language-switch').selectOption('ja');
  await expect(page.locator('html')).toHaveAttribute('lang', 'ja');
  await expect(page.locator('h1')).toHaveText('問題一覧');

  // Another browser (no language cookie, English Accept-Language): Japanese once logged in.
  const other = await newContext(browser, { locale: 'en-US' });
  const otherPage = await other.newPage();
  await otherPage.goto('/problems');
  await expect(otherPage.locator('html')).toHaveAttribute('lang', 'en');
  await login(otherPage, username, password);
  await otherPage.goto('/problems');
  await expect(otherPage.locator('html')).toHaveAttribute('lang', 'ja');
  await expect(otherPage.locator('h1')).toHaveText('問題一覧');
  await other.close();
});
