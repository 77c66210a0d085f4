// console.js: loaded on every page. htmx 2 + the SSE extension + small glue.
import './htmx-global.js';
import 'htmx-ext-sse';

// --- CSRF header on every htmx request -------------------------------------
document.addEventListener('htmx:configRequest', (evt) => {
  const meta = document.querySelector('meta[name="csrf-token"]');
  if (meta && meta.content) evt.detail.headers['X-CSRF-Token'] = meta.content;
});

// --- <time datetime> in the viewer's local time -----------------------------
let timeFormat;
function formatter() {
  if (!timeFormat) {
    const opts = { dateStyle: 'medium', timeStyle: 'short' };
    try {
      timeFormat = new Intl.DateTimeFormat(document.documentElement.lang || undefined, opts);
    } catch (_) {
      timeFormat = new Intl.DateTimeFormat(undefined, opts);
    }
  }
  return timeFormat;
}

function localizeTimes(root) {
  for (const el of root.querySelectorAll('time[datetime]')) {
    const value = el.getAttribute('datetime');
    // Only full timestamps (a date alone has no time to convert).
    if (!value.includes('T')) continue;
    const date = new Date(value);
    if (Number.isNaN(date.getTime())) continue;
    el.textContent = formatter().format(date);
    el.title = date.toISOString();
  }
}

// --- Copy buttons -----------------------------------------------------------
function revealCopyButtons(root) {
  for (const btn of root.querySelectorAll('button.copy[data-copy][hidden]')) {
    btn.hidden = false;
  }
}

function copyFallback(text) {
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.style.position = 'fixed';
  ta.style.top = '-10000px';
  ta.style.opacity = '0';
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch (_) {
    ok = false;
  }
  ta.remove();
  return ok;
}

async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (_) {
      // fall through to the fallback
    }
  }
  return copyFallback(text);
}

const copyLabels = new WeakMap();
const copyTimers = new WeakMap();

document.addEventListener('click', async (evt) => {
  const btn = evt.target instanceof Element ? evt.target.closest('button.copy[data-copy]') : null;
  if (!btn) return;
  const source = document.getElementById(btn.dataset.copy);
  if (!source) return;
  const ok = await copyText(source.textContent);
  if (!ok || !btn.dataset.copied) return;
  if (!copyLabels.has(btn)) copyLabels.set(btn, btn.textContent);
  btn.textContent = btn.dataset.copied;
  clearTimeout(copyTimers.get(btn));
  copyTimers.set(
    btn,
    setTimeout(() => {
      btn.textContent = copyLabels.get(btn);
    }, 1500),
  );
});

// --- <select data-autosubmit> submits its form ----------------------------
document.addEventListener('change', (evt) => {
  const el = evt.target;
  if (!(el instanceof HTMLSelectElement) || !el.hasAttribute('data-autosubmit') || !el.form) return;
  if (typeof el.form.requestSubmit === 'function') el.form.requestSubmit();
  else el.form.submit();
});

// --- Run on load and on content htmx swapped in ------------------------------
function enhance(root) {
  localizeTimes(root);
  revealCopyButtons(root);
}

// htmx fires afterSettle on the requesting element, with the swap target in detail.target
// (gone after an outerHTML swap): look at whichever is still in the page, else everywhere.
document.addEventListener('htmx:afterSettle', (evt) => {
  const roots = [evt.detail && evt.detail.target, evt.target].filter(
    (el) => el instanceof Element && el.isConnected,
  );
  if (roots.length === 0) roots.push(document);
  for (const root of roots) enhance(root);
});

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', () => enhance(document));
} else {
  enhance(document);
}
