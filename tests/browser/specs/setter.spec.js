// A problem setter: made one by the admin, creates a problem, uploads a good package (accepted)
// and a broken one (refused with its reasons, nothing changed).
import { join } from 'node:path';
import {
  test, expect, register, adminPage, setRole, login, randomName, zipDirectory, examplesDir,
  server, PASSWORD,
} from '../lib/e2e.js';

test('a setter creates a problem and uploads packages', async ({ page, browser }) => {
  const { username } = await register(page);

  // A contestant is refused the management console.
  await page.goto('/manage/problems');
  await expect(page.locator('h1')).toHaveText('Not allowed');

  const admin = await adminPage(browser);
  await setRole(admin.page, username, 'setter');
  await admin.context.close();

  await page.locator('header.site form[action="/logout"] button').click();
  await login(page, username, PASSWORD);
  await expect(page.locator('header.site nav a[href="/manage"]')).toBeVisible();

  // Create a problem.
  const slug = randomName('p');
  const title = `Sum ${slug}`;
  await page.goto('/manage/problems');
  await page.locator('#slug').fill(slug);
  await page.locator('#title').fill(title);
  await page.locator('#statement').fill('Print the sum of **two** integers, $a + b$.');
  await page.locator('#tags-field').fill('math, easy');
  await page.locator('#difficulty').fill('800');
  await page.locator('#visibility').selectOption('public');
  await page.locator('main form[action="/manage/problems"] button[type=submit]').click();
  await expect(page).toHaveURL(new RegExp(`/manage/problems/${slug}$`));
  await expect(page.locator('h1')).toContainText(title);
  await expect(page.locator('main')).toContainText('No package yet.');

  // Edit it.
  await page.locator('#title').fill(`${title} (edited)`);
  await page.locator('main form[action^="/manage/problems/"]:not([enctype]) button[type=submit]').click();
  await expect(page.locator('main .flash.ok')).toHaveText('Saved.');
  await expect(page.locator('h1')).toContainText(`${title} (edited)`);

  // A good package: examples/problems/aplusb, problem.yaml at the zip's root.
  const tmp = server().tmp;
  const good = zipDirectory(examplesDir('aplusb'), join(tmp, `${slug}-good.zip`));
  await page.locator('#package').setInputFiles(good);
  await page.locator('main form[enctype="multipart/form-data"] button[type=submit]').click();
  await expect(page.locator('main .flash.ok')).toHaveText('Package accepted.', { timeout: 60_000 });
  await expect(page.locator('main')).toContainText('A package is installed');
  await expect(page.locator('#package-errors')).toHaveCount(0);

  // A broken package: problem.yaml is not YAML and there are no secret tests.
  const broken = zipDirectory(examplesDir('aplusb'), join(tmp, `${slug}-broken.zip`), {
    skip: ['data/secret'],
    replace: { 'problem.yaml': 'name: [unclosed\nlimits: {time_limit: one\n' },
  });
  await page.locator('#package').setInputFiles(broken);
  await page.locator('main form[enctype="multipart/form-data"] button[type=submit]').click();
  await expect(page.locator('main .flash.error[role=alert]').first()).toHaveText('Package refused: nothing was changed.', { timeout: 60_000 });
  const reasons = page.locator('#package-errors li');
  await expect(reasons.first()).toBeVisible();
  expect(await reasons.count()).toBeGreaterThanOrEqual(1);
  console.log(`[setter] package refused: ${(await reasons.allTextContents()).join(' | ')}`);
  // Nothing changed: the good package is still installed.
  await expect(page.locator('main')).toContainText('A package is installed');

  // The problem is public and judged with the good package.
  await page.goto('/manage/problems');
  const row = page.locator('main table.data tbody tr').filter({ has: page.locator(`a[href="/manage/problems/${slug}"]`) });
  await expect(row.locator('td').nth(2)).toHaveText('Public');
  await expect(row.locator('td').nth(3)).toHaveText('✓');
  await page.goto(`/problems/${slug}`);
  await expect(page.locator('#problem-title')).toHaveText(`${title} (edited)`);
  await expect(page.locator('.statement-body strong')).toHaveText('two');
  await expect(page.locator('#sample-1-input')).toHaveText('1 2');
});
