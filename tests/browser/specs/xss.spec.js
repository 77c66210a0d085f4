// Script injection: payloads in a username, a problem's title, statement and tags, a source,
// a compiler's output and a run's output are shown as text, never run, never become elements.
import {
  test, expect, register, adminPage, setRole, login, randomName, quickSubmit, waitForVerdict,
  chooseLanguage, typeInEditor, newContext, PASSWORD, VERDICT_TIMEOUT,
} from '../lib/e2e.js';

const IMG = '<img src=x onerror="window.__xss=1;alert(1)">';
const SCRIPT = '<script>window.__xss=1;alert(1)</script>';
const SVG = '<svg onload="window.__xss=1;alert(1)">';
const LINK = '[x](javascript:window.__xss=1)';
const TEXTAREA = '</textarea><script>window.__xss=1;alert(1)</script>';

/** Watches a page: dialogs, page errors and CSP reports; checks nothing ran. */
async function watch(page) {
  const seen = { dialogs: [], errors: [] };
  page.on('dialog', async (dialog) => {
    seen.dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  page.on('pageerror', (error) => seen.errors.push(String(error)));
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample || ''}`.trim());
    });
  });
  return seen;
}

/** No payload ran and none became an element on the page that is open. */
async function expectInert(page, seen, where) {
  expect(await page.evaluate(() => window.__xss), `window.__xss on ${where}`).toBeUndefined();
  expect(seen.dialogs, `dialogs on ${where}`).toEqual([]);
  const injected = await page.evaluate(() => ({
    // A statement may hold images (Markdown, sanitised); anywhere else a payload's img is injection.
    img: [...document.querySelectorAll('img[src="x"]')].filter((el) => !el.closest('.statement-body')).length,
    handlers: [...document.querySelectorAll('*')].filter((el) => [...el.attributes].some((a) => /^on/i.test(a.name))).map((el) => el.outerHTML.slice(0, 120)),
    inlineScripts: [...document.scripts].filter((s) => !s.src).map((s) => s.textContent.slice(0, 120)),
    svgs: [...document.querySelectorAll('main svg')].filter((s) => !s.matches('.heatmap, figure svg')).length,
    jsLinks: [...document.querySelectorAll('a[href]')].filter((a) => /^\s*javascript:/i.test(a.getAttribute('href'))).length,
    csp: window.__csp || [],
  }));
  expect(injected.img, `img[src=x] on ${where}`).toBe(0);
  expect(injected.handlers, `elements with on* attributes on ${where}`).toEqual([]);
  expect(injected.inlineScripts, `inline scripts on ${where}`).toEqual([]);
  expect(injected.svgs, `injected svg on ${where}`).toBe(0);
  expect(injected.jsLinks, `javascript: links on ${where}`).toBe(0);
  if (injected.csp.length) console.log(`[xss] CSP reports on ${where}: ${injected.csp.join(' | ')}`);
  return injected;
}

test('a username payload is refused and shown as text', async ({ page }) => {
  const seen = await watch(page);
  const payload = '<img src=x onerror=window.__xss=1>';
  await page.goto('/register');
  await page.locator('#username').fill(payload);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('#password_again').fill(PASSWORD);
  await page.locator('main form button[type=submit]').click();
  await expect(page.locator('main .flash.error')).toBeVisible();
  await expect(page.locator('#username')).toHaveValue(payload);
  await expectInert(page, seen, 'the refused registration');

  // The login form echoes the name too.
  await page.goto('/login');
  await page.locator('#username').fill(payload);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('main form button[type=submit]').click();
  await expect(page.locator('main .flash.error')).toHaveText('Wrong username or password.');
  await expect(page.locator('#username')).toHaveValue(payload);
  await expectInert(page, seen, 'the refused login');
});

test('payloads in a problem, a source, a compiler output and a run output stay text', async ({ page, browser }) => {
  const seen = await watch(page);
  const { username } = await register(page);
  const admin = await adminPage(browser);
  await setRole(admin.page, username, 'setter');
  await admin.context.close();
  await login(page, username, PASSWORD);

  // A problem whose title and statement carry payloads.
  const slug = randomName('x');
  const title = `T ${IMG}${SCRIPT}`;
  const statement = [
    `Markdown ${IMG} and ${SCRIPT}.`,
    '',
    SVG,
    '',
    `A link: ${LINK} and <a href="javascript:window.__xss=1">raw</a>.`,
    '',
    TEXTAREA,
    '',
    '<iframe src="javascript:window.__xss=1"></iframe><object data="javascript:window.__xss=1"></object>',
    '',
    '<div style="background:url(javascript:window.__xss=1)" onclick="window.__xss=1">styled</div>',
  ].join('\n');
  await page.goto('/manage/problems');
  await page.locator('#slug').fill(slug);
  await page.locator('#title').fill(title);
  await page.locator('#statement').fill(statement);
  await page.locator('#visibility').selectOption('public');
  await page.locator('main form[action="/manage/problems"] button[type=submit]').click();
  await expect(page).toHaveURL(new RegExp(`/manage/problems/${slug}$`));
  // The edit page shows both as text: the title in the heading, the statement in its textarea.
  await expect(page.locator('h1')).toContainText(title);
  await expect(page.locator('#title')).toHaveValue(title);
  await expect(page.locator('#statement')).toHaveValue(statement);
  await expectInert(page, seen, 'the manage problem page');
  // Saving it again keeps it byte for byte (nothing was decoded on the way).
  await page.locator(`main form[action="/manage/problems/${slug}"] button[type=submit]`).click();
  await expect(page.locator('main .flash.ok')).toHaveText('Saved.');
  await expect(page.locator('#statement')).toHaveValue(statement);
  await expectInert(page, seen, 'the saved manage problem page');

  // (The list is paged: the search finds the new problem wherever it falls.)
  await page.goto(`/problems?q=${slug}`);
  await expect(page.locator(`main a[href="/problems/${slug}"]`)).toHaveText(title);
  await expectInert(page, seen, 'the problem list');
  // (The home page lists the first five problems, not the newest: only check it is inert.)
  await page.goto('/');
  await expectInert(page, seen, 'the home page');
  await page.goto('/manage/problems');
  await expect(page.locator('main table.data tbody tr', { has: page.locator(`a[href="/manage/problems/${slug}"]`) }).locator('td').nth(1)).toHaveText(title);
  await expectInert(page, seen, 'the manage problem list');

  await page.goto(`/problems/${slug}`);
  await expect(page.locator('#problem-title')).toHaveText(title);
  await expect(page).toHaveTitle(`${title} · UltiCode`);
  const body = page.locator('.statement-body');
  await expect(body).toContainText('Markdown');
  await expect(body).toContainText('styled');
  // Whatever the sanitizer kept, click it.
  for (const link of await body.locator('a').all()) await link.click({ trial: false }).catch(() => {});
  await page.locator('.statement-body div', { hasText: 'styled' }).first().click().catch(() => {});
  await expect(page).toHaveURL(new RegExp(`/problems/${slug}$`));
  const statementHtml = await body.innerHTML();
  const letThrough = await body.locator('script, iframe, object, embed, svg, form, [style]').evaluateAll((els) => els.map((e) => e.outerHTML));
  expect(letThrough, `elements the sanitizer let through; the statement is:\n${statementHtml}`).toEqual([]);
  // Images are statement content: they keep only harmless attributes.
  const imgAttributes = await body.locator('img').evaluateAll((els) => els.flatMap((e) => [...e.attributes].map((a) => `${a.name}=${a.value}`)));
  for (const attribute of imgAttributes) expect(attribute, statementHtml).toMatch(/^(src=x|alt=.*|title=.*|width=\d+|height=\d+)$/);
  // Links lost their javascript: targets.
  expect(await body.locator('a[href]').count(), statementHtml).toBe(0);
  await expectInert(page, seen, 'the problem page');

  // A run whose output is markup (htmx swaps it in).
  await expect(page.locator('#editor-host .cm-editor')).toBeVisible();
  await chooseLanguage(page, 'python3');
  const printer = `print(${JSON.stringify(IMG)})\nprint(${JSON.stringify(SCRIPT)})\n`;
  await typeInEditor(page, printer);
  await page.locator('#run-button').click();
  await expect(page.locator('#run-stdout')).toHaveText(`${IMG}\n${SCRIPT}`, { timeout: VERDICT_TIMEOUT, useInnerText: true });
  await expectInert(page, seen, 'the run result');

  // A source that tries to close the textarea it is shown in, submitted to A+B (accepted).
  const source = `# ${TEXTAREA}\n# ${IMG}\na, b = map(int, input().split())\nprint(a + b)\n`;
  await page.goto('/problems/aplusb');
  await expect(page.locator('#editor-host .cm-editor')).toBeVisible();
  await chooseLanguage(page, 'python3');
  await typeInEditor(page, source);
  // The same form without htmx (as without scripts): the problem page comes back with the
  // source in the textarea.
  await page.evaluate(() => {
    const form = document.getElementById('submit-form');
    form.action = form.querySelector('#run-button').getAttribute('formaction');
    form.submit();
  });
  await expect(page).toHaveURL(/\/problems\/aplusb\/run$/);
  await expect(page.locator('#run-stdout')).toBeAttached({ timeout: VERDICT_TIMEOUT });
  await expect(page.locator('#source')).toHaveValue(source);
  await expectInert(page, seen, 'the problem page re-rendered with the source');
  await page.locator('#submit-button').click();
  await expect(page).toHaveURL(/\/submissions\/\d+$/);
  await expect(page.locator('#final-verdict')).toHaveText('Accepted', { timeout: VERDICT_TIMEOUT });
  await expect(page.locator('pre.source code')).toHaveText(source.trimEnd());
  await expectInert(page, seen, 'the submission page');

  // A compiler that echoes markup.
  const other = await newContext(browser);
  const otherPage = await other.newPage();
  const otherSeen = await watch(otherPage);
  await register(otherPage);
  const compileError = await quickSubmit(otherPage, 'aplusb', 'cpp17', `#error ${IMG} ${SCRIPT}\nint main() {}\n`);
  await waitForVerdict(otherPage, compileError, 'Compilation error');
  await expect(otherPage.locator('#compile-output')).toContainText(IMG);
  await expectInert(otherPage, otherSeen, 'the compilation error');
  await otherPage.goto('/submissions');
  await expectInert(otherPage, otherSeen, 'the submission list');
  await other.close();

  expect(seen.errors, 'page errors').toEqual([]);
});
