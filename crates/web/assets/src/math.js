// math.js: loaded on pages with math. Renders .math-inline / .math-display with KaTeX.
import katex from 'katex';

// KaTeX builds its DOM with element.setAttribute('style', ...) in a few places
// (error colour, some MathML). Under `style-src 'self'` that is refused, while the
// CSSOM (element.style) is allowed: route 'style' through the CSSOM while rendering.
const nativeSetAttribute = Element.prototype.setAttribute;
function cspSafeSetAttribute(name, value) {
  if (String(name).toLowerCase() === 'style' && this.style) {
    this.style.cssText = String(value);
  } else {
    nativeSetAttribute.call(this, name, value);
  }
}

const rendered = new WeakSet();

function renderMath(el) {
  if (rendered.has(el)) return;
  rendered.add(el);
  const tex = el.textContent;
  Element.prototype.setAttribute = cspSafeSetAttribute;
  try {
    katex.render(tex, el, {
      displayMode: el.classList.contains('math-display'),
      throwOnError: false,
      output: 'htmlAndMathml',
    });
  } catch (err) {
    // Not a TeX error (those are rendered by KaTeX): leave the source readable.
    el.textContent = tex;
    el.classList.add('math-error');
    el.title = String((err && err.message) || err);
  } finally {
    Element.prototype.setAttribute = nativeSetAttribute;
  }
}

function renderAll(root) {
  for (const el of root.querySelectorAll('.math-inline, .math-display')) renderMath(el);
}

// htmx fires afterSettle on the requesting element, with the swap target in detail.target
// (gone after an outerHTML swap): look at whichever is still in the page, else everywhere.
document.addEventListener('htmx:afterSettle', (evt) => {
  const roots = [evt.detail && evt.detail.target, evt.target].filter(
    (el) => el instanceof Element && el.isConnected,
  );
  if (roots.length === 0) roots.push(document);
  for (const root of roots) renderAll(root);
});

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', () => renderAll(document));
} else {
  renderAll(document);
}
