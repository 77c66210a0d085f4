// Accessibility: axe-core on every main page, in the light and the dark colour scheme. A
// violation of impact `serious` or `critical` fails the test; the message lists each with its
// rule, the elements and axe's summary, so it can be fixed.
import AxeBuilder from '@axe-core/playwright';
import {
  test, expect, loginAdmin, quickSubmit, waitForVerdict, newContext, hookContext, SOLUTIONS,
} from '../lib/e2e.js';

const PAGES = [
  { name: 'home', path: '/', ready: (p) => expect(p.locator('h1')).toBeVisible() },
  { name: 'problems', path: '/problems', ready: (p) => expect(p.locator('main table.data')).toBeVisible() },
  { name: 'problem (editor)', path: '/problems/aplusb', ready: (p) => expect(p.locator('#editor-host .cm-editor')).toBeVisible() },
  { name: 'login', path: '/login', anonymous: true, ready: (p) => expect(p.locator('#username')).toBeVisible() },
  { name: 'register', path: '/register', anonymous: true, ready: (p) => expect(p.locator('#password_again')).toBeVisible() },
  { name: 'submissions', path: '/submissions', ready: (p) => expect(p.locator('main table.data')).toBeVisible() },
  { name: 'submission', path: (s) => `/submissions/${s.submission}`, ready: (p) => expect(p.locator('#final-verdict')).toBeVisible() },
  { name: 'profile', path: '/profile', ready: (p) => expect(p.locator('svg.heatmap')).toBeVisible() },
  { name: 'manage', path: '/manage', ready: (p) => expect(p.locator('main .grid-cards')).toBeVisible() },
  { name: 'manage problems', path: '/manage/problems', ready: (p) => expect(p.locator('#slug')).toBeVisible() },
  { name: 'manage problem', path: '/manage/problems/aplusb', ready: (p) => expect(p.locator('#package')).toBeVisible() },
  { name: 'users', path: '/manage/users', ready: (p) => expect(p.locator('main table.data select').first()).toBeVisible() },
  { name: 'rejudge', path: '/manage/rejudge', ready: (p) => expect(p.locator('#ids')).toBeVisible() },
  { name: 'pipeline', path: '/manage/pipeline', ready: (p) => expect(p.locator('#submissions-by-state')).toBeVisible() },
  { name: 'audit', path: '/manage/audit', ready: (p) => expect(p.locator('h1')).toBeVisible() },
  { name: 'system', path: '/manage/system', ready: (p) => expect(p.locator('#doctor')).toBeVisible() },
  // States with their own colours: verdicts, notices, errors, a run's output.
  { name: 'submission (wrong answer)', path: (s) => `/submissions/${s.wrong}`, ready: (p) => expect(p.locator('#final-verdict')).toHaveText('Wrong answer') },
  { name: 'submission (compilation error)', path: (s) => `/submissions/${s.compileError}`, ready: (p) => expect(p.locator('#compile-output')).toBeVisible() },
  { name: 'password', path: '/account/password', ready: (p) => expect(p.locator('#new_password_again')).toBeVisible() },
  { name: 'not found', path: '/no-such-page', status: 404, ready: (p) => expect(p.locator('h1')).toBeVisible() },
  { name: 'search', path: '/search?q=sum', ready: (p) => expect(p.locator('#q')).toBeVisible() },
  { name: 'notifications', path: '/notifications', ready: (p) => expect(p.locator('main table.data input[type=checkbox]').first()).toBeVisible() },
  { name: 'mail address', path: '/account/email', ready: (p) => expect(p.locator('#email')).toBeVisible() },
  { name: 'forgotten password', path: '/account/forgot', anonymous: true, ready: (p) => expect(p.locator('#email')).toBeVisible() },
  { name: 'reset password', path: '/account/reset?token=t', anonymous: true, ready: (p) => expect(p.locator('#new_password_again')).toBeVisible() },
  { name: 'verify address', path: '/account/verify?token=t', anonymous: true, ready: (p) => expect(p.locator('main form button[type=submit]')).toBeVisible() },
  {
    name: 'login (refused)', path: '/login', anonymous: true,
    ready: async (p) => {
      await p.locator('#username').fill('nobody-here');
      await p.locator('#password').fill('not the password');
      await p.locator('main form button[type=submit]').click();
      await expect(p.locator('main .flash.error')).toBeVisible();
    },
  },
  {
    name: 'problem (run result)', path: '/problems/aplusb',
    ready: async (p) => {
      await expect(p.locator('#editor-host .cm-editor')).toBeVisible();
      await p.locator('#language').selectOption('python3');
      await p.locator('#stdin').fill('1 2');
      await p.locator('#run-button').click();
      await expect(p.locator('#run-result .verdict')).toBeVisible({ timeout: 60_000 });
    },
  },
  {
    name: 'manage problem (saved)', path: '/manage/problems/aplusb',
    ready: async (p) => {
      await p.locator('main form[action="/manage/problems/aplusb"] button[type=submit]').click();
      await expect(p.locator('main .flash.ok')).toBeVisible();
    },
  },
];

const BLOCKING = new Set(['serious', 'critical']);

function describe(violations) {
  return violations.map((v) => {
    const nodes = v.nodes.map((n) => `    - ${n.target.join(' ')}\n      ${(n.failureSummary || '').replace(/\n/g, '\n      ')}`).join('\n');
    return `  [${v.impact}] ${v.id}: ${v.help} (${v.helpUrl})\n${nodes}`;
  }).join('\n');
}

// Logged in as admin once for the file; each test gets its own context from that state.
let shared;
test.beforeAll(async ({ browser }) => {
  const hook = await hookContext(browser);
  const page = await hook.context.newPage();
  await loginAdmin(page);
  const submission = await quickSubmit(page, 'aplusb', 'python3', SOLUTIONS.aplusbPython);
  const wrong = await quickSubmit(page, 'aplusb', 'python3', SOLUTIONS.aplusbWrongPython);
  const compileError = await quickSubmit(page, 'aplusb', 'cpp17', SOLUTIONS.cppSyntaxError);
  await waitForVerdict(page, submission, 'Accepted');
  await waitForVerdict(page, wrong, 'Wrong answer');
  await waitForVerdict(page, compileError, 'Compilation error');
  shared = { storageState: await hook.context.storageState(), submission, wrong, compileError };
  await hook.close();
});

for (const colorScheme of ['light', 'dark']) {
  for (const target of PAGES) {
    test(`${target.name} (${colorScheme}) has no serious accessibility violation`, async ({ browser }) => {
      const context = await newContext(browser, {
        colorScheme,
        ...(target.anonymous ? {} : { storageState: shared.storageState }),
      });
      const page = await context.newPage();
      await page.emulateMedia({ colorScheme });
      const path = typeof target.path === 'function' ? target.path(shared) : target.path;
      const response = await page.goto(path);
      expect(response.status(), path).toBe(target.status ?? 200);
      await target.ready(page);
      expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(colorScheme === 'dark');
      const results = await new AxeBuilder({ page }).analyze();
      const blocking = results.violations.filter((v) => BLOCKING.has(v.impact));
      const minor = results.violations.filter((v) => !BLOCKING.has(v.impact));
      if (minor.length) console.log(`[a11y] ${target.name} (${colorScheme}) minor:\n${describe(minor)}`);
      expect(blocking, `serious/critical violations on ${path} (${colorScheme}):\n${describe(blocking)}`).toEqual([]);
      await context.close();
    });
  }
}
