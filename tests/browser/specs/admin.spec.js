// The administrator's console: roles, rejudging, the live pipeline dashboard, replaying a dead
// letter, the audit log, languages and the sandbox's checks.
import { join } from 'node:path';
import {
  test, expect, register, adminPage, setRole, login, randomName, quickSubmit, waitForVerdict,
  numberIn, stateCount, python, server, SOLUTIONS, VERDICT_TIMEOUT,
} from '../lib/e2e.js';

/** The audit rows for `action` on `target`. */
function auditRow(page, action, target) {
  const exactly = (text) => new RegExp(`^${text.replace(/[.]/g, '\\.')}$`);
  return page.locator('#audit tbody tr')
    .filter({ has: page.locator('td:nth-child(4)', { hasText: exactly(action) }) })
    .filter({ has: page.locator('td:nth-child(5)', { hasText: exactly(target) }) });
}

/**
 * Waits until the audit log (filtered, newest first) holds `count` records of `action` on
 * `target`: the log consumes the owners' events, so it catches up a moment after the change.
 */
async function expectAudited(page, action, target, count) {
  const path = `/manage/audit?action=${encodeURIComponent(action)}&target=${encodeURIComponent(target)}`;
  await expect(async () => {
    await page.goto(path);
    await expect(auditRow(page, action, target)).toHaveCount(count, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  return auditRow(page, action, target);
}

test('the management index links every admin page', async ({ browser }) => {
  const { context, page } = await adminPage(browser);
  await page.locator('header.site nav a[href="/manage"]').click();
  await expect(page.locator('h1')).toHaveText('Manage');
  for (const href of ['/manage/problems', '/manage/pipeline', '/manage/rejudge', '/manage/users', '/manage/audit', '/manage/system']) {
    await expect(page.locator(`main a.card[href="${href}"]`)).toBeVisible();
  }
  await context.close();
});

test('changing a role ends the user\'s sessions, applies at the next login and is audited', async ({ page, browser }) => {
  const { username, password } = await register(page);
  const { context, page: admin } = await adminPage(browser);
  const id = await setRole(admin, username, 'setter');
  // A role change revokes every session of the account: the user is logged out...
  await page.goto('/problems');
  await expect(page.locator('header.site .session a', { hasText: 'Log in' })).toBeVisible();
  // ...and has the new role when logging in again.
  await login(page, username, password);
  await expect(page.locator('header.site nav a[href="/manage"]')).toBeVisible();
  await setRole(admin, username, 'user');
  await login(page, username, password);
  await expect(page.locator('header.site nav a[href="/manage"]')).toHaveCount(0);

  const changes = await expectAudited(admin, 'auth.role_changed', `account:${id}`, 2);
  await expect(changes.locator('td:nth-child(6)')).toHaveText(['{"role":"user"}', '{"role":"setter"}']);
  await context.close();
});

test('rejudging a submission starts generation 2', async ({ page, browser }) => {
  await register(page);
  const id = await quickSubmit(page, 'aplusb', 'python3', SOLUTIONS.aplusbPython);
  await waitForVerdict(page, id, 'Accepted');

  const { context, page: admin } = await adminPage(browser);
  await admin.goto('/manage/rejudge');
  await admin.locator('#ids').fill(`#${id}`);
  await admin.locator('main form button[type=submit]').click();
  await expect(admin.locator('main .flash.ok')).toHaveText('1 submission handled.');
  const result = admin.locator('#rejudge-results tbody tr').filter({ has: admin.locator(`a[href="/submissions/${id}"]`) });
  await expect(result.locator('td').nth(1)).toHaveText('rejudging as generation 2');

  // The contestant sees the new generation judged.
  await page.goto(`/submissions/${id}`);
  await expect(page.locator('dl.facts div', { hasText: 'Generation' }).locator('dd')).toHaveText('2');
  await expect(page.locator('#final-verdict')).toHaveText('Accepted', { timeout: VERDICT_TIMEOUT });

  // A number that is no submission is reported as such; a word is refused.
  await admin.goto('/manage/rejudge');
  await admin.locator('#ids').fill('999999999');
  await admin.locator('main form button[type=submit]').click();
  await expect(admin.locator('#rejudge-results tbody tr td').nth(1)).toHaveText('no such submission');
  await admin.locator('#ids').fill('abc');
  await admin.locator('main form button[type=submit]').click();
  await expect(admin.locator('main .flash.error')).toHaveText('Not a submission number: abc');

  await expectAudited(admin, 'submission.rejudged', `submission:${id}`, 1);
  await context.close();
});

test('the pipeline dashboard refreshes itself as submissions are judged', async ({ page, browser }) => {
  await register(page);
  const { context, page: admin } = await adminPage(browser);
  await admin.goto('/manage/pipeline');
  await expect(admin.locator('h1')).toHaveText('Pipeline');
  await expect(admin.locator('#queue-length')).toHaveText(/^\d+$/);
  await expect(admin.locator('#queue-pending')).toHaveText(/^\d+$/);
  await expect(admin.locator('#dead-letter-count')).toHaveText(/^\d+$/);
  await expect(admin.locator('#submissions-by-state')).toBeAttached();
  await expect(admin.locator('#outbox-by-state')).toBeAttached();
  await admin.evaluate(() => { window.__e2eMarker = 'pipeline'; });
  const doneBefore = await stateCount(admin.locator('#submissions-by-state'), 'done');

  const id = await quickSubmit(page, 'aplusb', 'python3', SOLUTIONS.aplusbPython);
  await waitForVerdict(page, id, 'Accepted');

  // htmx swaps the panel every 2 s: the judged submission shows up without a reload.
  await expect.poll(() => stateCount(admin.locator('#submissions-by-state'), 'done'), { timeout: 30_000 })
    .toBeGreaterThan(doneBefore);
  expect(await admin.evaluate(() => window.__e2eMarker)).toBe('pipeline');
  await expect(admin.locator('#outbox-by-state tr').first()).toBeAttached();
  await context.close();
});

test('a dead letter can be replayed', async ({ page, browser }) => {
  await register(page);
  const id = await quickSubmit(page, 'aplusb', 'python3', SOLUTIONS.aplusbPython);
  await waitForVerdict(page, id, 'Accepted');

  // Make a dead letter of this submission's own judging message (its outbox payload).
  const { dataDir } = server();
  const reason = `e2e ${randomName('reason')}`;
  const deadId = Number(python(`
import sqlite3, sys, time
sub, queue, submission_id, reason = sys.argv[1:5]
with sqlite3.connect(sub, timeout=30) as db:
    db.execute('PRAGMA busy_timeout = 30000')
    (payload,) = db.execute('SELECT payload FROM judge_outbox WHERE submission_id = ? ORDER BY generation DESC LIMIT 1', (int(submission_id),)).fetchone()
db = sqlite3.connect(queue, timeout=30)
db.execute('PRAGMA busy_timeout = 30000')
with db:
    cur = db.execute('INSERT INTO stream_dead (payload, reason, deliveries, dead_at) VALUES (?, ?, ?, ?)',
                     (payload, reason, 5, int(time.time() * 1000)))
print(cur.lastrowid)
db.close()
`, [join(dataDir, 'submission.db'), join(dataDir, 'queue.db'), String(id), reason]).trim());
  expect(deadId).toBeGreaterThan(0);

  const { context, page: admin } = await adminPage(browser);
  await admin.goto('/manage/pipeline');
  await expect.poll(() => numberIn(admin.locator('#dead-letter-count'))).toBeGreaterThanOrEqual(1);
  const before = await numberIn(admin.locator('#dead-letter-count'));
  const row = admin.locator('#dead-letters tbody tr').filter({ hasText: reason });
  await expect(row).toHaveCount(1);
  await expect(row.locator('td').first()).toContainText(`"submission_id":${id}`);
  await expect(row.locator('td.num')).toHaveText('5');
  await row.locator(`form[action="/manage/dead-letters/${deadId}/replay"] button`).click();
  await expect(admin.locator('main .flash.ok')).toHaveText(`Dead letter ${deadId} was put back on the queue.`);
  await expect.poll(() => numberIn(admin.locator('#dead-letter-count'))).toBeLessThan(before);
  await expect(admin.locator('#dead-letters tbody tr').filter({ hasText: reason })).toHaveCount(0);

  // The replayed message is stale (that generation was judged): the verdict stays.
  await page.goto(`/submissions/${id}`);
  await expect(page.locator('#final-verdict')).toHaveText('Accepted');

  await expectAudited(admin, 'admin.judge_dead_letter_replayed', `dead_letter:${deadId}`, 1);
  await context.close();
});

test('the system page lists languages and the sandbox checks', async ({ browser }) => {
  const { context, page } = await adminPage(browser);
  await page.goto('/manage/system');
  await expect(page.locator('h1')).toHaveText('Languages and sandbox');
  const languages = page.locator('#languages tbody tr');
  await expect(languages.first()).toBeVisible();
  await expect(page.locator('#languages tbody td:first-child code', { hasText: /^python3$/ })).toBeVisible();
  const checks = page.locator('#doctor tbody tr');
  await expect(checks.first()).toBeVisible();
  expect(await checks.count()).toBeGreaterThan(0);
  await context.close();
});

test('a contestant cannot open the admin pages', async ({ page }) => {
  await register(page);
  for (const path of ['/manage', '/manage/users', '/manage/pipeline', '/manage/audit', '/manage/system', '/manage/rejudge']) {
    const response = await page.goto(path);
    expect(response.status(), path).toBe(403);
    await expect(page.locator('h1')).toHaveText('Not allowed');
  }
});
