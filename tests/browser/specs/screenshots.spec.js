// Full-page screenshots of the main pages, light and dark, English and Japanese, into
// tests/browser/screenshots/<name>-<theme>-<lang>.png (not committed); four of them are also
// copied to docs/screenshots/ for the README when ULTICODE_UPDATE_SCREENSHOTS=1 (so a test run
// leaves the committed ones alone).
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  test, expect, loginAdmin, quickSubmit, waitForVerdict, newContext, hookContext, editorsMeasured, server, SOLUTIONS,
} from '../lib/e2e.js';

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, '..', 'screenshots');
const DOCS = join(server().repoRoot, 'docs', 'screenshots');
const CURATED = ['problem-light-en', 'submission-dark-en', 'pipeline-light-en', 'problems-light-ja'];

const PAGES = [
  { name: 'home', path: () => '/', ready: (p) => expect(p.locator('h1')).toBeVisible() },
  { name: 'problems', path: () => '/problems', ready: (p) => expect(p.locator('main table.data')).toBeVisible() },
  { name: 'problem', path: () => '/problems/aplusb', ready: (p) => expect(p.locator('#editor-host .cm-editor')).toBeVisible() },
  { name: 'submission', path: (s) => `/submissions/${s.submission}`, ready: async (p) => {
    await expect(p.locator('#final-verdict')).toBeVisible();
    await expect(p.locator('.source-view .cm-editor')).toBeVisible();
  } },
  { name: 'profile', path: () => '/profile', ready: (p) => expect(p.locator('svg.heatmap')).toBeVisible() },
  { name: 'pipeline', path: () => '/manage/pipeline', ready: (p) => expect(p.locator('#submissions-by-state')).toBeVisible() },
  { name: 'manage-problem', path: () => '/manage/problems/aplusb', ready: (p) => expect(p.locator('#package')).toBeVisible() },
];

let shared;
test.beforeAll(async ({ browser }) => {
  const hook = await hookContext(browser);
  const page = await hook.context.newPage();
  await loginAdmin(page);
  const submission = await quickSubmit(page, 'aplusb', 'python3', SOLUTIONS.aplusbPython);
  await waitForVerdict(page, submission, 'Accepted');
  shared = { storageState: await hook.context.storageState(), submission };
  await hook.close();
});

for (const [lang, locale] of [['en', 'en-US'], ['ja', 'ja-JP']]) {
  for (const theme of ['light', 'dark']) {
    test(`screenshots (${theme}, ${lang})`, async ({ browser }) => {
      mkdirSync(OUT, { recursive: true });
      const context = await newContext(browser, { colorScheme: theme, locale, storageState: shared.storageState });
      const page = await context.newPage();
      for (const target of PAGES) {
        await page.goto(target.path(shared));
        await expect(page.locator('html')).toHaveAttribute('lang', lang);
        await target.ready(page);
        await editorsMeasured(page);
        const file = join(OUT, `${target.name}-${theme}-${lang}.png`);
        await page.screenshot({ path: file, fullPage: true, animations: 'disabled', caret: 'hide' });
        const name = `${target.name}-${theme}-${lang}`;
        if (CURATED.includes(name) && process.env.ULTICODE_UPDATE_SCREENSHOTS === "1") {
          mkdirSync(DOCS, { recursive: true });
          copyFileSync(file, join(DOCS, `${name}.png`));
        }
      }
      await context.close();
    });
  }
}
