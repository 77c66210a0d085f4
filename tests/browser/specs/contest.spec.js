// A whole ICPC contest through the console: an admin creates it running and attaches A+B,
// a new user registers and solves A from the contest's problem page, the scoreboard shows
// it, the admin freezes the board (the contestant's open board shows the freeze banner
// live, over the API's board stream), ends the contest, unfreezes and finalizes; the final
// board shows the solve with no banner.
import {
  test, expect, register, adminPage, chooseLanguage, typeInEditor, expectVerdict, randomName,
  SOLUTIONS, VERDICT_TIMEOUT,
} from '../lib/e2e.js';

/** A `datetime-local` value in UTC, `minutes` from now. */
function utcMinutesFromNow(minutes) {
  return new Date(Date.now() + minutes * 60_000).toISOString().slice(0, 16);
}

/** The scoreboard row of `team`. */
function boardRow(page, team) {
  return page.locator('#scoreboard tbody tr.team-row').filter({
    has: page.locator('th.team', { hasText: team }),
  });
}

test('an ICPC contest from creation to the final board', async ({ page, browser }) => {
  const slug = randomName('c');
  const title = `Contest ${slug}`;

  // The admin creates a contest that started ten minutes ago (two hours, frozen for the last
  // hour) and attaches A+B as A.
  const { context: adminContext, page: admin } = await adminPage(browser);
  await admin.goto('/manage');
  await admin.locator('main a.card[href="/manage/contests"]').click();
  await admin.locator('main a[href="/manage/contests/new"]').click();
  await expect(admin.locator('h1')).toHaveText('New contest');
  await admin.locator('#slug').fill(slug);
  await admin.locator('#title').fill(title);
  await admin.locator('#format').selectOption('icpc');
  await admin.locator('#start').fill(utcMinutesFromNow(-10));
  await admin.locator('#duration_minutes').fill('120');
  await admin.locator('#freeze_minutes').fill('60');
  await admin.locator('#visibility').selectOption('public');
  await admin.locator('#contest-form button[type=submit]').click();
  await expect(admin).toHaveURL(new RegExp(`/manage/contests/${slug}$`));
  await expect(admin.locator('#contest-status')).toHaveText('Running');
  await admin.locator('#problems').fill('A aplusb\n');
  await admin.locator('#problems-form button[type=submit]').click();
  await expect(admin.locator('main .flash.ok')).toHaveText('Saved.');
  await expect(admin.locator('#problems')).toHaveValue('A aplusb\n');

  // A new user finds it in the list and registers as a team of their own.
  const { username } = await register(page);
  await page.locator('header.site nav a[href="/contests"]').click();
  await expect(page.locator('h1')).toHaveText('Contests');
  await page.locator(`#contests a[href="/contests/${slug}"]`).click();
  await expect(page.locator('h1')).toHaveText(title);
  await expect(page.locator('#countdown time')).toBeVisible();
  await page.locator('#register-form button[type=submit]').click();
  await expect(page).toHaveURL(new RegExp(`/contests/${slug}$`));
  await expect(page.locator('#participation')).toContainText('You are registered');
  await expect(page.locator('#register-form')).toHaveCount(0);

  // An accepted A+B from the contest's problem page.
  await page.locator(`#contest-problems a[href="/contests/${slug}/problems/A"]`).click();
  await expect(page.locator('#problem-title')).toHaveText('A. A plus B');
  await expect(page.locator('#editor-host .cm-editor')).toBeVisible();
  await chooseLanguage(page, 'python3');
  await typeInEditor(page, SOLUTIONS.aplusbPython);
  await page.locator('#submit-button').click();
  await expect(page).toHaveURL(/\/submissions\/\d+$/);
  const id = Number(page.url().match(/(\d+)$/)[1]);
  await expectVerdict(page, 'Accepted');

  // The team's contest submissions list it.
  await page.goto(`/contests/${slug}/submissions`);
  const mine = page.locator('#contest-submissions tbody tr').filter({ has: page.locator(`a[href="/submissions/${id}"]`) });
  await expect(mine).toHaveCount(1);
  await expect(mine.locator('.verdict')).toHaveText('Accepted');

  // The scoreboard: the board consumes the verdict a moment after it is out.
  await page.goto(`/contests/${slug}/scoreboard`);
  await expect(async () => {
    await page.reload();
    await expect(boardRow(page, username).locator('td.solved')).toHaveText('1', { timeout: 1_000 });
  }).toPass({ timeout: VERDICT_TIMEOUT });
  await expect(boardRow(page, username).locator('td.cell.verdict-AC .cell-result')).toHaveText('+1');
  await expect(boardRow(page, username).locator('td.cell.first-to-solve .sr-only')).toHaveText('first to solve');
  await expect(page.locator('#freeze-banner')).toHaveCount(0);
  await page.evaluate(() => { window.__e2eMarker = 'board'; });

  // The admin freezes the board now: the contestant's open board shows the banner live.
  await admin.goto(`/manage/contests/${slug}`);
  await admin.locator('#freeze-button').click();
  await expect(admin.locator('main .flash.ok')).toHaveText('The scoreboard is frozen.');
  await expect(admin.locator('#board-state')).toHaveText('frozen');
  await expect(page.locator('#freeze-banner')).toHaveText(
    /^The scoreboard was frozen with \d+ minutes remaining - submissions in the last \d+ minutes of the contest are still shown as pending\.$/,
    { timeout: 30_000 },
  );
  expect(await page.evaluate(() => window.__e2eMarker)).toBe('board');
  await expect(boardRow(page, username).locator('td.solved')).toHaveText('1');

  // Unfreezing waits for the end: the button is offered only then.
  await expect(admin.locator('#unfreeze-button')).toHaveCount(0);

  // The admin ends the contest (its start moved three hours back), then unfreezes and
  // finalizes.
  await admin.locator('#start').fill(utcMinutesFromNow(-180));
  await admin.locator('#contest-form button[type=submit]').click();
  await expect(admin.locator('main .flash.ok')).toHaveText('Saved.');
  await expect(admin.locator('#contest-status')).toHaveText('Ended');
  await expect(admin.locator('#board-state')).toHaveText('frozen');
  await admin.locator('#unfreeze-button').click();
  await expect(admin.locator('main .flash.ok')).toHaveText('The scoreboard is unfrozen.');
  await expect(admin.locator('#board-state')).toHaveText('not frozen');
  await admin.locator('#finalize-button').click();
  await expect(admin.locator('main .flash.ok')).toHaveText('The results are final.');

  // The contestant's open board drops the banner live; the final board has the solve.
  await expect(page.locator('#freeze-banner')).toHaveCount(0, { timeout: 30_000 });
  expect(await page.evaluate(() => window.__e2eMarker)).toBe('board');
  await page.goto(`/contests/${slug}/scoreboard`);
  await expect(page.locator('#freeze-banner')).toHaveCount(0);
  await expect(boardRow(page, username).locator('td.rank')).toHaveText('1');
  await expect(boardRow(page, username).locator('td.solved')).toHaveText('1');
  await page.goto(`/contests/${slug}`);
  await expect(page.locator('#contest-status')).toHaveText('Ended');
  await expect(page.locator('#contest-final')).toHaveText('The results are final.');
  await expect(page.locator('#virtual-form')).toHaveCount(0);

  await adminContext.close();
});
