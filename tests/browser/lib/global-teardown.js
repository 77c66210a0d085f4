// Stops the server started by global-setup (SIGTERM, then waits for it to exit), keeps its
// log in test-results/server.log and deletes the temporary directory.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const GRACE_MS = 30_000;

function waitForExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => resolvePromise(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolvePromise(true);
    });
  });
}

export default async function globalTeardown() {
  const server = globalThis.__ulticodeServer;
  if (!server) return;
  const { child, tmp, logPath } = server;
  child.kill('SIGTERM');
  if (!(await waitForExit(child, GRACE_MS))) {
    console.error(`[e2e] ulticode up did not stop within ${GRACE_MS} ms of SIGTERM: killing it`);
    child.kill('SIGKILL');
    await waitForExit(child, GRACE_MS);
  }
  try {
    const results = join(here, '..', 'test-results');
    mkdirSync(results, { recursive: true });
    copyFileSync(logPath, join(results, 'server.log'));
  } catch (error) {
    console.error(`[e2e] could not keep the server log: ${error}`);
  }
  rmSync(tmp, { recursive: true, force: true });
  delete globalThis.__ulticodeServer;
}
