// Builds the browser assets of the web console into ../static (fixed names, no hashes).
// Usage: npm ci && npm run build
import * as esbuild from 'esbuild';
import { mkdir, readFile, readdir, rm, writeFile, copyFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, '..', 'static');
const require = createRequire(import.meta.url);
const JS_GZIP_BUDGET = 400 * 1024;

// CodeMirror's style-mod uses a constructed (adopted) stylesheet only inside shadow roots and
// injects a <style> element into a document's <head>, which `style-src 'self'` refuses. Make it
// use an adopted stylesheet for documents too (constructed stylesheets are CSSOM, which the CSP
// allows); it keeps the <style> fallback for browsers without adoptedStyleSheets.
let styleModPatched = false;
const styleModAdopted = {
  name: 'style-mod-adopted-stylesheets',
  setup(build) {
    build.onLoad({ filter: /[\\/]style-mod[\\/]src[\\/]style-mod\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const from = 'if (!root.head && root.adoptedStyleSheets && win.CSSStyleSheet) {';
      if (!source.includes(from)) throw new Error(`style-mod changed: cannot find \`${from}\` in ${args.path}`);
      styleModPatched = true;
      return { contents: source.replace(from, 'if (root.adoptedStyleSheets && win.CSSStyleSheet) {'), loader: 'js' };
    });
  },
};

// 1. Start from an empty output directory: no stale files may remain.
await rm(outdir, { recursive: true, force: true });
await mkdir(join(outdir, 'fonts'), { recursive: true });

// 2. The three JS islands, one self-contained file each.
await esbuild.build({
  absWorkingDir: here,
  entryPoints: {
    console: 'src/console.js',
    editor: 'src/editor.js',
    math: 'src/math.js',
  },
  outdir,
  entryNames: '[name]',
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  platform: 'browser',
  legalComments: 'eof',
  charset: 'utf8',
  sourcemap: false,
  splitting: false,
  metafile: false,
  logLevel: 'warning',
  // htmx carries (never-called, allowEval is off) eval code paths.
  logOverride: { 'direct-eval': 'silent' },
  plugins: [styleModAdopted],
});
if (!styleModPatched) throw new Error('style-mod was not patched (did its path change?)');

// 3. Our stylesheet.
const cssTarget = ['chrome100', 'firefox100', 'safari15', 'edge100'];
const consoleCss = await readFile(join(here, 'src', 'console.css'), 'utf8');
const consoleOut = await esbuild.transform(consoleCss, {
  loader: 'css',
  minify: true,
  target: cssTarget,
  sourcefile: 'console.css',
});
await writeFile(join(outdir, 'console.css'), consoleOut.code);

// 4. KaTeX's stylesheet, woff2 fonts only, fonts referenced as fonts/NAME.woff2.
const katexDist = join(dirname(require.resolve('katex/package.json')), 'dist');
let katexCss = await readFile(join(katexDist, 'katex.css'), 'utf8');
katexCss = katexCss.replace(/src:\s*([^;}]*)/g, (_, list) => {
  const kept = list
    .split(/,(?=\s*url\()/)
    .map((s) => s.trim())
    .filter((s) => /format\(\s*["']woff2["']\s*\)/.test(s));
  if (kept.length === 0) throw new Error(`no woff2 source in @font-face src: ${list}`);
  return `src: ${kept.join(', ')}`;
});
const fontRefs = [...katexCss.matchAll(/url\(\s*["']?([^"')]+)["']?\s*\)/g)].map((m) => m[1]);
for (const ref of fontRefs) {
  if (!/^fonts\/KaTeX_[A-Za-z0-9_-]+\.woff2$/.test(ref)) throw new Error(`unexpected url() in katex.css: ${ref}`);
}
const katexOut = await esbuild.transform(katexCss, {
  loader: 'css',
  minify: true,
  target: cssTarget,
  sourcefile: 'katex.css',
});
await writeFile(join(outdir, 'katex.css'), katexOut.code);
for (const ref of [...new Set(fontRefs)].sort()) {
  await copyFile(join(katexDist, ref), join(outdir, ref));
}

// 5. Sizes.
async function listFiles(dir) {
  const out = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(path)));
    else out.push(path);
  }
  return out;
}
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
let jsGzip = 0;
let fontsRaw = 0;
let fontCount = 0;
console.log('file                         raw        gzip -9');
for (const path of await listFiles(outdir)) {
  const data = await readFile(path);
  const name = relative(outdir, path);
  if (name.startsWith('fonts/')) {
    fontsRaw += data.length;
    fontCount += 1;
    continue;
  }
  const gz = gzipSync(data, { level: 9 }).length;
  if (name.endsWith('.js')) jsGzip += gz;
  console.log(`${name.padEnd(24)} ${kib(data.length).padStart(11)} ${kib(gz).padStart(11)}`);
}
console.log(`fonts/ (${fontCount} woff2)       ${kib(fontsRaw).padStart(11)}`);
console.log(`total gzip of JS: ${kib(jsGzip)} (budget ${kib(JS_GZIP_BUDGET)})`);
if (jsGzip > JS_GZIP_BUDGET) {
  console.error('JS bundle over budget');
  process.exit(1);
}
