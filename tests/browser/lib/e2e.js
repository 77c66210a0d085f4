// Shared fixtures and helpers of the browser tests.
import { test as base, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import net from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';

export { expect };

/** Generous waits for things the judge does (compiling, running every test). */
export const VERDICT_TIMEOUT = 60_000;
export const NOJS_VERDICT_TIMEOUT = 90_000;
export const PASSWORD = 'correct horse battery';

let cached;
/** What global-setup wrote: baseURL, adminPassword, dataDir, tmp, repoRoot. */
export function server() {
  if (!cached) {
    const path = process.env.ULTICODE_E2E_STATE;
    if (!path) throw new Error('ULTICODE_E2E_STATE is not set: run through playwright (global-setup)');
    cached = JSON.parse(readFileSync(path, 'utf8'));
  }
  return cached;
}

// Opt-in, for working on the asset bundle without rebuilding the binary (which embeds it):
// ULTICODE_E2E_ASSETS_DIR=<dir> serves /assets/* from <dir> (e.g. crates/web/static after
// `npm run build`) instead of the server's embedded copy. Off by default.
const ASSETS_DIR = process.env.ULTICODE_E2E_ASSETS_DIR || '';
const MIME = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.woff2': 'font/woff2' };

/** Applies ULTICODE_E2E_ASSETS_DIR to a browser context (no-op when unset). */
export async function useAssetsFromDisk(context) {
  if (!ASSETS_DIR) return;
  await context.route('**/assets/**', async (route) => {
    const path = new URL(route.request().url()).pathname.replace(/^\/assets\//, '');
    const file = join(ASSETS_DIR, normalize(path).replace(/^(\.\.[/\\])+/, ''));
    if (!existsSync(file)) return route.fulfill({ status: 404, body: 'not found' });
    return route.fulfill({ status: 200, body: readFileSync(file), contentType: MIME[extname(file)] || 'application/octet-stream' });
  });
}

/**
 * A client address of its own: the server limits logins and registrations per client IP (5
 * registrations an hour), and every browser here connects from 127.0.0.1. This forwards a
 * local port to the server from a random 127.x.y.z (all of 127/8 is this machine), so each
 * test is a client of its own, as real users are. Bytes pass through unchanged.
 */
export async function startClientAddress(target = server().baseURL) {
  const { hostname, port } = new URL(target);
  const localAddress = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
  const sockets = new Set();
  const listener = net.createServer((inbound) => {
    const outbound = net.connect({ host: hostname, port: Number(port), localAddress });
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise((resolvePromise, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', resolvePromise);
  });
  return {
    url: `http://127.0.0.1:${listener.address().port}`,
    localAddress,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolvePromise) => listener.close(() => resolvePromise()));
    },
  };
}

// The running test's own client address (see startClientAddress).
let current = null;

/**
 * A new browser context on the server (with the assets hook), as tests make their own: it
 * shares the running test's client address unless `options.baseURL` says otherwise.
 */
export async function newContext(browser, options = {}) {
  const baseURL = options.baseURL ?? current?.url;
  if (!baseURL) throw new Error('newContext outside a test: pass options.baseURL (see startClientAddress)');
  const context = await browser.newContext({ ...options, baseURL });
  await useAssetsFromDisk(context);
  return context;
}

export const test = base.extend({
  clientAddress: [async ({}, use) => {
    const address = await startClientAddress();
    current = address;
    await use(address);
    current = null;
    await address.close();
  }, { auto: true }],
  baseURL: async ({ clientAddress }, use) => {
    await use(clientAddress.url);
  },
  context: async ({ context }, use) => {
    await useAssetsFromDisk(context);
    await use(context);
  },
});

/** For beforeAll hooks: a context on a client address of its own, and a way to end both. */
export async function hookContext(browser, options = {}) {
  const address = await startClientAddress();
  const context = await newContext(browser, { ...options, baseURL: address.url });
  return {
    context,
    async close() {
      await context.close();
      await address.close();
    },
  };
}

export function randomName(prefix = 'u') {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** Registers through the form; the console logs the new account in and shows /problems. */
export async function register(page, username = randomName(), password = PASSWORD) {
  await page.goto('/register');
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  await page.locator('#password_again').fill(password);
  await page.locator('main form button[type=submit]').click();
  await expect(page).toHaveURL(/\/problems$/);
  await expect(page.locator('header.site .session a[href="/profile"]')).toHaveText(username);
  return { username, password };
}

export async function login(page, username, password) {
  await page.goto('/login');
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(password);
  await page.locator('main form button[type=submit]').click();
  await expect(page.locator('header.site .session a[href="/profile"]')).toHaveText(username);
}

export async function loginAdmin(page) {
  await login(page, 'admin', server().adminPassword);
}

/** A new browser context (own cookies) logged in as admin, with its page. */
export async function adminPage(browser, options = {}) {
  const context = await newContext(browser, options);
  const page = await context.newPage();
  await loginAdmin(page);
  return { context, page };
}

/** The id of a user, read off the admin's user list. */
export async function userId(adminPageHandle, username) {
  await adminPageHandle.goto('/manage/users');
  const row = adminPageHandle.locator('main table.data tbody tr').filter({
    has: adminPageHandle.locator('td:nth-child(2)', { hasText: new RegExp(`^${username}$`) }),
  });
  await expect(row).toHaveCount(1);
  return Number((await row.locator('td').first().textContent()).trim());
}

/** As admin, gives `username` the role `role` through /manage/users. */
export async function setRole(adminPageHandle, username, role) {
  const id = await userId(adminPageHandle, username);
  await adminPageHandle.locator(`#role-${id}`).selectOption(role);
  await adminPageHandle.locator(`form[action="/manage/users/${id}/role"] button[type=submit]`).click();
  await expect(adminPageHandle.locator('main .flash.ok')).toHaveText(`The role of ${username} was changed.`);
  await expect(adminPageHandle.locator(`#role-${id}`)).toHaveValue(role);
  return id;
}

/** Picks a language in the problem page's select and waits for the editor to show its starter. */
export async function chooseLanguage(page, value) {
  await page.locator('#language').selectOption(value);
  await expect(page.locator('#language')).toHaveValue(value);
}

/**
 * Replaces the CodeMirror editor's text with `code`, as typed text (insertText: no
 * auto-indent or bracket closing), and checks the hidden textarea the form posts got it.
 */
export async function typeInEditor(page, code) {
  const content = page.locator('#editor-host .cm-content');
  await content.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await expect(page.locator('#source')).toHaveValue('');
  await page.keyboard.insertText(code);
  await expect(page.locator('#source')).toHaveValue(code);
}

/** The language id of the first C++ option the problem page offers. */
export async function cppLanguage(page) {
  const values = await page.locator('#language option').evaluateAll((os) => os.map((o) => o.value));
  const cpp = values.find((v) => v.startsWith('cpp'));
  if (!cpp) throw new Error(`no C++ language offered: ${values.join(', ')}`);
  return cpp;
}

/** Submits from the problem page (JS on) and returns the new submission's id. */
export async function submitFromProblemPage(page) {
  await page.locator('#submit-button').click();
  await expect(page).toHaveURL(/\/submissions\/\d+$/);
  return Number(page.url().match(/\/submissions\/(\d+)$/)[1]);
}

/** Opens the problem page, waits for the editor, picks `language`, types `code`, submits. */
export async function submitWithEditor(page, slug, language, code) {
  await page.goto(`/problems/${slug}`);
  await expect(page.locator('#editor-host .cm-editor')).toBeVisible();
  await chooseLanguage(page, language);
  await typeInEditor(page, code);
  return submitFromProblemPage(page);
}

/** Waits for the final verdict of the submission page that is open. */
export async function expectVerdict(page, text, timeout = VERDICT_TIMEOUT) {
  await expect(page.locator('#final-verdict')).toHaveText(text, { timeout });
}

/** Runs python3 with a small script (zip files, SQLite): returns its stdout. */
export function python(script, args = []) {
  return execFileSync('python3', ['-c', script, ...args], { encoding: 'utf8' });
}

/** Zips the directory `dir` (paths relative to it) into `out`, leaving out `skip` and replacing files by `replace`. */
export function zipDirectory(dir, out, { skip = [], replace = {} } = {}) {
  python(
    `
import json, os, sys, zipfile
src, out, skip, replace = sys.argv[1], sys.argv[2], set(json.loads(sys.argv[3])), json.loads(sys.argv[4])
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src).replace(os.sep, '/')
            if any(rel == s or rel.startswith(s.rstrip('/') + '/') for s in skip):
                continue
            if rel in replace:
                z.writestr(rel, replace[rel])
            else:
                z.write(path, rel)
`,
    [dir, out, JSON.stringify(skip), JSON.stringify(replace)],
  );
  return out;
}

export function examplesDir(slug) {
  return join(server().repoRoot, 'examples', 'problems', slug);
}

export const SOLUTIONS = {
  aplusbPython: 'a, b = map(int, input().split())\nprint(a + b)\n',
  aplusbWrongPython: 'a, b = map(int, input().split())\nprint(a - b)\n',
  cppSyntaxError: '#include <cstdio>\nint main() {\n  int a, b\n  scanf("%d %d", &a, &b);\n  printf("%d\\n", a + b);\n}\n',
};

/**
 * Submits `source` to `slug` by posting the problem page's own form (multipart, with its
 * CSRF token) from the page's context: quicker than typing, same route as the Submit button.
 */
export async function quickSubmit(page, slug, language, source) {
  await page.goto(`/problems/${slug}`);
  const csrf = await page.locator('#submit-form input[name=csrf]').inputValue();
  const response = await page.request.post(`/problems/${slug}/submit`, {
    multipart: { csrf, language, source, stdin: '' },
    maxRedirects: 0,
  });
  expect(response.status(), await response.text()).toBe(303);
  const location = response.headers().location;
  const id = Number(location.match(/^\/submissions\/(\d+)$/)?.[1]);
  expect(id, `redirected to ${location}`).toBeGreaterThan(0);
  return id;
}

/** Opens a submission's page and waits for its final verdict. */
export async function waitForVerdict(page, id, text, timeout = VERDICT_TIMEOUT) {
  await page.goto(`/submissions/${id}`);
  await expectVerdict(page, text, timeout);
}

/** A number shown in an element, e.g. a count. */
export async function numberIn(locator) {
  return Number((await locator.textContent()).trim());
}

/** The count of `state` in a two-column state table (0 when the state has no row). */
export async function stateCount(table, state) {
  const rows = await table.locator('tr').evaluateAll((trs) =>
    trs.map((tr) => [tr.querySelector('th')?.textContent.trim(), tr.querySelector('td')?.textContent.trim()]));
  const row = rows.find(([name]) => name === state);
  return row ? Number(row[1]) : 0;
}

/**
 * Waits until every CodeMirror view on the page has measured itself: its first line number
 * sits level with its first line. CodeMirror measures a view once it is in the viewport, so
 * each is scrolled into view first (a full-page screenshot does not scroll), then the page
 * goes back to the top.
 */
export async function editorsMeasured(page) {
  await page.evaluate(() => document.fonts.ready.then(() => true));
  const editors = page.locator('.cm-editor');
  for (let i = 0; i < (await editors.count()); i += 1) await editors.nth(i).scrollIntoViewIfNeeded();
  // One self-contained function (the page's CSP allows no eval): all measured, or the report.
  const measured = (report) => {
    const views = [...document.querySelectorAll('.cm-editor')].map((editor) => {
      const line = editor.querySelector('.cm-line');
      const number = [...editor.querySelectorAll('.cm-lineNumbers .cm-gutterElement')]
        .find((el) => el.style.visibility !== 'hidden');
      if (!line || !number) return { ok: true };
      const a = line.getBoundingClientRect();
      const b = number.getBoundingClientRect();
      return { ok: b.height > 0 && Math.abs(a.top - b.top) < 1, line: a.top, number: b.top, height: b.height };
    });
    return report ? views : views.every((v) => v.ok);
  };
  try {
    await page.waitForFunction(measured, false, { timeout: 30_000 });
  } catch (error) {
    throw new Error(`CodeMirror views not measured: ${JSON.stringify(await page.evaluate(measured, true))}: ${error.message}`);
  }
  await page.evaluate(() => window.scrollTo(0, 0));
}
