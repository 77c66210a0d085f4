// Starts one real `ulticode up` on a free port with a fresh data directory, waits until it is
// ready and hands its address and the admin password to the tests (environment + JSON file).
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..', '..');
const STARTUP_TIMEOUT_MS = 180_000;

async function ready(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return response.status === 200;
  } catch {
    return false;
  }
}

export default async function globalSetup() {
  const bin = process.env.ULTICODE_BIN || '/var/cache/ulticode/target/debug/ulticode';
  const tmp = mkdtempSync(join(tmpdir(), 'ulticode-e2e-'));
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  const logPath = join(tmp, 'server.log');
  const log = createWriteStream(logPath);

  const child = spawn(
    bin,
    ['up', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--workers', '1'],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  globalThis.__ulticodeServer = { child, tmp, logPath };

  let stdout = '';
  let exited = null;
  child.stdout.on('data', (chunk) => {
    stdout += chunk.toString();
    log.write(chunk);
  });
  child.stderr.on('data', (chunk) => log.write(chunk));
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  child.on('error', (error) => {
    exited = { error };
  });

  const started = Date.now();
  let baseURL = null;
  let adminPassword = null;
  // Poll the process's own output and then its readiness (a condition, not a fixed wait).
  for (;;) {
    if (exited) {
      throw new Error(`ulticode up exited early (${JSON.stringify(exited)}); log in ${logPath}:\n${stdout}`);
    }
    if (Date.now() - started > STARTUP_TIMEOUT_MS) {
      child.kill('SIGKILL');
      throw new Error(`ulticode up was not ready within ${STARTUP_TIMEOUT_MS} ms; log in ${logPath}:\n${stdout}`);
    }
    baseURL ??= stdout.match(/UltiCode is serving on (http:\/\/127\.0\.0\.1:\d+)/)?.[1] ?? null;
    adminPassword ??= stdout.match(/admin account created: username admin, password (\S+)/)?.[1] ?? null;
    if (baseURL && adminPassword
      && (await ready(`${baseURL}/health/ready`))
      && (await ready(`${baseURL}/api/v1/problems/aplusb`))) {
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }

  const state = { baseURL, adminPassword, dataDir, tmp, pid: child.pid, logPath, repoRoot };
  const statePath = join(tmp, 'server.json');
  writeFileSync(statePath, JSON.stringify(state, null, 2));
  process.env.ULTICODE_E2E_STATE = statePath;
  process.env.ULTICODE_E2E_BASE_URL = baseURL;
  console.log(`[e2e] ulticode up ready at ${baseURL} in ${Date.now() - started} ms (data ${dataDir})`);
}
