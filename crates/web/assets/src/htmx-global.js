// Must be the first import of console.js: it makes the one htmx instance
// global before anything (e.g. the SSE extension) looks for `window.htmx`.
import htmx from 'htmx.org';

window.htmx = htmx;

// Safe defaults under our Content-Security-Policy; the pages' <meta name="htmx-config">
// says the same and is merged over these when htmx initialises.
Object.assign(htmx.config, {
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
});

export default htmx;
