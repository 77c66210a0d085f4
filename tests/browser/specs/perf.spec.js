// A performance note, not a benchmark: the problem page's first contentful paint and the
// JavaScript it transfers (the server does not compress; gzip sizes are what a compressing
// proxy would send). Written to test-results/perf.json and printed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { test, expect } from '../lib/e2e.js';

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, '..', 'test-results', 'perf.json');
// The asset build's own budget (crates/web/assets/build.mjs) for all three islands.
const JS_GZIP_BUDGET = 400 * 1024;

test('problem page: first contentful paint and JavaScript bytes', async ({ page }) => {
  const scripts = [];
  page.on('response', (response) => {
    if (new URL(response.url()).pathname.endsWith('.js')) {
      scripts.push((async () => {
        const body = await response.body();
        const sizes = await response.request().sizes();
        return {
          url: new URL(response.url()).pathname,
          status: response.status(),
          contentEncoding: response.headers()['content-encoding'] || null,
          bodyBytes: body.length,
          transferredBodyBytes: sizes.responseBodySize,
          headerBytes: sizes.responseHeadersSize,
          gzipBytes: gzipSync(body).length,
          gzip9Bytes: gzipSync(body, { level: 9 }).length,
        };
      })());
    }
  });
  await page.goto('/problems/aplusb', { waitUntil: 'load' });
  await expect(page.locator('#editor-host .cm-editor')).toBeVisible();
  await expect.poll(() => page.evaluate(() => performance.getEntriesByName('first-contentful-paint').length)).toBeGreaterThan(0);
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    return {
      firstContentfulPaintMs: performance.getEntriesByName('first-contentful-paint')[0].startTime,
      domContentLoadedMs: nav.domContentLoadedEventEnd,
      loadMs: nav.loadEventEnd,
      htmlBytes: nav.decodedBodySize,
    };
  });
  const js = await Promise.all(scripts);
  const total = (key) => js.reduce((sum, s) => sum + s[key], 0);
  const report = {
    page: '/problems/aplusb',
    measuredAt: new Date().toISOString(),
    ...Object.fromEntries(Object.entries(timing).map(([k, v]) => [k, Math.round(v * 10) / 10])),
    javascript: {
      files: js.map((s) => s.url),
      totalBodyBytes: total('bodyBytes'),
      totalTransferredBodyBytes: total('transferredBodyBytes'),
      totalGzipBytes: total('gzipBytes'),
      totalGzip9Bytes: total('gzip9Bytes'),
      perFile: js,
    },
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`[perf] /problems/aplusb: FCP ${report.firstContentfulPaintMs} ms, DOMContentLoaded ${report.domContentLoadedMs} ms, load ${report.loadMs} ms`);
  console.log(`[perf] JavaScript: ${js.length} files (${report.javascript.files.join(', ')}), ${kib(report.javascript.totalBodyBytes)} transferred uncompressed, ${kib(report.javascript.totalGzipBytes)} gzip (-6), ${kib(report.javascript.totalGzip9Bytes)} gzip -9`);
  console.log(`[perf] written to ${OUT}`);

  expect(report.javascript.files).toEqual(expect.arrayContaining(['/assets/console.js', '/assets/editor.js']));
  expect(report.firstContentfulPaintMs).toBeGreaterThan(0);
  expect(report.javascript.totalGzip9Bytes, 'JS over the asset budget').toBeLessThanOrEqual(JS_GZIP_BUDGET);
});
