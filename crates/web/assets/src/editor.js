// editor.js: loaded on the problem page. The CodeMirror 6 island over <textarea id="source">.
// Size matters here (the JS budget is 400 KiB gzip for all three islands, and the Lezer
// grammars are most of it): a lean setup without autocompletion/search/lint, and each
// language's LRLanguage alone (its completion data would be unused without autocompletion;
// PHP without the HTML mixing that would pull in the HTML, CSS and JS grammars).
import { minimalSetup } from 'codemirror';
import {
  EditorView,
  keymap,
  lineNumbers,
  highlightActiveLine,
  highlightActiveLineGutter,
  dropCursor,
  rectangularSelection,
  crosshairCursor,
} from '@codemirror/view';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import { indentWithTab } from '@codemirror/commands';
import {
  HighlightStyle,
  LanguageSupport,
  StreamLanguage,
  bracketMatching,
  defaultHighlightStyle,
  syntaxHighlighting,
  foldGutter,
  foldKeymap,
  indentOnInput,
} from '@codemirror/language';
import { oneDark } from '@codemirror/theme-one-dark';
import { cppLanguage } from '@codemirror/lang-cpp';
import { javaLanguage } from '@codemirror/lang-java';
import { pythonLanguage } from '@codemirror/lang-python';
import { javascriptLanguage } from '@codemirror/lang-javascript';
import { rustLanguage } from '@codemirror/lang-rust';
import { goLanguage } from '@codemirror/lang-go';
import { phpLanguage } from '@codemirror/lang-php';
import { csharp, kotlin, scala, objectiveC } from '@codemirror/legacy-modes/mode/clike';
import { d } from '@codemirror/legacy-modes/mode/d';
import { haskell } from '@codemirror/legacy-modes/mode/haskell';
import { oCaml } from '@codemirror/legacy-modes/mode/mllike';
import { pascal } from '@codemirror/legacy-modes/mode/pascal';
import { ruby } from '@codemirror/legacy-modes/mode/ruby';
import { lua } from '@codemirror/legacy-modes/mode/lua';
import { erlang } from '@codemirror/legacy-modes/mode/erlang';
import { scheme } from '@codemirror/legacy-modes/mode/scheme';
import { commonLisp } from '@codemirror/legacy-modes/mode/commonlisp';
import { fortran } from '@codemirror/legacy-modes/mode/fortran';
import { shell } from '@codemirror/legacy-modes/mode/shell';

const MAX_UPLOAD = 1024 * 1024;

// CodeMirror's default (light) highlight style has three colours under WCAG AA's 4.5:1 on a
// white or active-line background: #e40 (regexps, escapes, special strings such as C's
// <stdio.h>), #f00 (invalid) and #085 (type names). The same style with darker ones.
const AA_LIGHT = { '#e40': '#b33800', '#f00': '#c30000', '#085': '#006f3c' };
const lightHighlighting = syntaxHighlighting(
  HighlightStyle.define(
    defaultHighlightStyle.specs.map((spec) =>
      spec.color && AA_LIGHT[spec.color] ? { ...spec, color: AA_LIGHT[spec.color] } : spec,
    ),
  ),
);
const LANGUAGE_KEY = 'ulticode:language';

const legacy = {
  csharp,
  kotlin,
  scala,
  objectivec: objectiveC,
  d,
  haskell,
  ocaml: oCaml,
  pascal,
  ruby,
  lua,
  erlang,
  scheme,
  commonlisp: commonLisp,
  fortran,
  shell,
};

const modern = {
  cpp: cppLanguage,
  java: javaLanguage,
  python: pythonLanguage,
  javascript: javascriptLanguage,
  rust: rustLanguage,
  go: goLanguage,
  php: phpLanguage,
};

const supportCache = new Map();
function languageSupport(mode) {
  if (!mode) return [];
  if (supportCache.has(mode)) return supportCache.get(mode);
  let ext = [];
  if (Object.prototype.hasOwnProperty.call(modern, mode)) ext = new LanguageSupport(modern[mode]);
  else if (Object.prototype.hasOwnProperty.call(legacy, mode)) ext = StreamLanguage.define(legacy[mode]);
  supportCache.set(mode, ext);
  return ext;
}

// localStorage may be missing or refuse (private mode, quota): never let that break the page.
const store = {
  get(key) {
    try {
      return window.localStorage.getItem(key);
    } catch (_) {
      return null;
    }
  },
  set(key, value) {
    try {
      window.localStorage.setItem(key, value);
    } catch (_) {
      /* ignore */
    }
  },
  remove(key) {
    try {
      window.localStorage.removeItem(key);
    } catch (_) {
      /* ignore */
    }
  },
};

function labelFor(textarea) {
  const aria = textarea.getAttribute('aria-label');
  if (aria) return aria;
  const label = textarea.id ? document.querySelector(`label[for="${CSS.escape(textarea.id)}"]`) : null;
  if (label) return label.textContent.trim();
  return textarea.labels && textarea.labels[0] ? textarea.labels[0].textContent.trim() : '';
}

function init() {
  const form = document.getElementById('submit-form');
  const textarea = document.getElementById('source');
  const host = document.getElementById('editor-host');
  if (!form || !textarea || !host) return;
  const select = document.getElementById('language');
  const fileInput = document.getElementById('source-file');
  const problem = form.dataset.problem || '';

  const selectedOption = () => (select ? select.options[select.selectedIndex] || null : null);
  const currentMode = () => {
    const opt = selectedOption();
    return opt ? opt.dataset.mode || '' : '';
  };
  const currentStarter = () => {
    const opt = selectedOption();
    return opt ? opt.dataset.starter || '' : '';
  };
  const draftKey = () => `ulticode:draft:${problem}:${select ? select.value : ''}`;

  // Initial text: what the server sent (e.g. after a run without JS), else the draft of the
  // language, else its starter. The remembered language applies unless the server insists on
  // its choice (data-keep) or sent code, which belongs to the language it selected. A text
  // that is only the starter (a function problem's page starts with it, for visitors without
  // JavaScript) is no code of the visitor's.
  const fromServer = textarea.value === currentStarter() ? '' : textarea.value;
  if (select && !select.hasAttribute('data-keep') && !fromServer.trim()) {
    const remembered = store.get(LANGUAGE_KEY);
    if (remembered && Array.from(select.options).some((o) => o.value === remembered)) {
      select.value = remembered;
    }
  }
  const initial = fromServer.trim() ? fromServer : store.get(draftKey()) || currentStarter();

  // Drafts, saved ~300 ms after the last change, under the key current at that change.
  let pending = null;
  const saveDraft = (key, text, starter) => {
    if (!text.trim() || text === starter) store.remove(key);
    else store.set(key, text);
  };
  const flushDraft = () => {
    if (!pending) return;
    clearTimeout(pending.timer);
    const { key, starter } = pending;
    pending = null;
    saveDraft(key, view.state.doc.toString(), starter);
  };
  const scheduleDraft = () => {
    const key = draftKey();
    if (pending && pending.key !== key) flushDraft();
    if (pending) clearTimeout(pending.timer);
    pending = { key, starter: currentStarter(), timer: setTimeout(flushDraft, 300) };
  };

  const language = new Compartment();
  const theme = new Compartment();
  const dark = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
  const themeFor = () => (dark && dark.matches ? oneDark : lightHighlighting);

  const submitButton = () => document.getElementById('submit-button');
  const label = labelFor(textarea);

  const view = new EditorView({
    parent: host,
    state: EditorState.create({
      doc: initial,
      extensions: [
        Prec.highest(
          keymap.of([
            {
              key: 'Mod-Enter',
              run: () => {
                const btn = submitButton();
                if (!btn) return false;
                btn.click();
                return true;
              },
            },
          ]),
        ),
        lineNumbers(),
        highlightActiveLineGutter(),
        foldGutter(),
        minimalSetup, // special chars, history, selection drawing, default highlight style, default + history keymaps
        dropCursor(),
        EditorState.allowMultipleSelections.of(true),
        indentOnInput(),
        bracketMatching(),
        rectangularSelection(),
        crosshairCursor(),
        highlightActiveLine(),
        keymap.of([...foldKeymap, indentWithTab]),
        language.of(languageSupport(currentMode())),
        theme.of(themeFor()),
        EditorView.contentAttributes.of(label ? { 'aria-label': label } : {}),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          textarea.value = update.state.doc.toString();
          scheduleDraft();
        }),
      ],
    }),
  });

  textarea.value = view.state.doc.toString();
  textarea.hidden = true;
  host.hidden = false;

  // The visible label now names the editor: clicking it focuses the editor.
  if (textarea.id) {
    for (const l of document.querySelectorAll(`label[for="${CSS.escape(textarea.id)}"]`)) {
      l.addEventListener('click', () => view.focus());
    }
  }

  const setText = (text) => {
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
  };

  if (select) {
    // Each language has its own draft: switching saves the text under the language left and
    // shows the draft of the new one, or its starter when there is none (or it is empty).
    let previousKey = draftKey();
    let previousStarter = currentStarter();
    select.addEventListener('change', () => {
      if (pending) {
        clearTimeout(pending.timer);
        pending = null;
      }
      saveDraft(previousKey, view.state.doc.toString(), previousStarter);
      previousKey = draftKey();
      previousStarter = currentStarter();
      store.set(LANGUAGE_KEY, select.value);
      const next = store.get(draftKey()) || currentStarter();
      view.dispatch({ effects: language.reconfigure(languageSupport(currentMode())) });
      if (next !== view.state.doc.toString()) setText(next);
      if (pending) {
        // setText scheduled a save of the text just loaded: nothing new to save.
        clearTimeout(pending.timer);
        pending = null;
      }
    });
  }

  if (dark) {
    const follow = () => view.dispatch({ effects: theme.reconfigure(themeFor()) });
    if (dark.addEventListener) dark.addEventListener('change', follow);
    else if (dark.addListener) dark.addListener(follow);
  }

  if (fileInput) {
    const errorBox = () => document.getElementById('source-file-error');
    const showError = (message) => {
      const box = errorBox();
      if (box) box.textContent = message;
    };
    fileInput.addEventListener('change', async () => {
      const file = fileInput.files && fileInput.files[0];
      if (!file) return;
      showError('');
      if (file.size > MAX_UPLOAD) {
        const box = errorBox();
        showError((box && box.dataset.tooLarge) || 'The file is larger than 1 MiB.');
        fileInput.value = '';
        return;
      }
      try {
        const text = await file.text();
        setText(text);
        fileInput.value = '';
        view.focus();
      } catch (_) {
        const box = errorBox();
        showError((box && box.dataset.readError) || 'The file could not be read.');
      }
    });
  }

  form.addEventListener('submit', () => {
    textarea.value = view.state.doc.toString();
    flushDraft();
  });
  window.addEventListener('pagehide', flushDraft);
}

// A submission's source: <pre class="source" data-highlight="MODE"> becomes a read-only
// editor with the same highlighting; without JavaScript the plain <pre> stays.
function highlightSources() {
  const dark = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
  for (const pre of document.querySelectorAll('pre.source[data-highlight]')) {
    const host = document.createElement('div');
    host.className = 'source-view';
    pre.before(host);
    new EditorView({
      parent: host,
      state: EditorState.create({
        doc: pre.textContent,
        extensions: [
          lineNumbers(),
          minimalSetup,
          EditorState.readOnly.of(true),
          EditorView.editable.of(false),
          EditorView.contentAttributes.of({ 'aria-label': pre.getAttribute('aria-label') || '' }),
          languageSupport(pre.dataset.highlight || ''),
          dark && dark.matches ? oneDark : lightHighlighting,
        ],
      }),
    });
    pre.hidden = true;
  }
}

function start() {
  init();
  highlightSources();
}

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', start);
} else {
  start();
}
