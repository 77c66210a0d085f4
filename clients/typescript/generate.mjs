// Writes the client's contract from a running UltiCode: `openapi.json` (the document, with
// the per-deployment language list taken out) and `src/schema.d.ts` (its types, by
// openapi-typescript). With `--check`, writes nothing and fails when either differs from
// what is committed: the API changed and the client was not regenerated.
//
//   node generate.mjs BASE_URL [--check]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [base, flag] = process.argv.slice(2);
if (!base) {
  console.error("usage: node generate.mjs BASE_URL [--check]");
  process.exit(2);
}
const response = await fetch(new URL("/api/openapi.json", base));
if (!response.ok) throw new Error(`GET /api/openapi.json: ${response.status}`);
const document = await response.json();

// The languages a deployment accepts are data (`GET /api/v1/languages`), not contract: the
// same client talks to servers with different toolchains.
for (const schema of ["NewSubmission", "RunRequest"]) {
  delete document.components.schemas[schema].properties.language.enum;
}
const text = JSON.stringify(document, null, 2) + "\n";

const scratch = mkdtempSync(join(tmpdir(), "ulticode-client-"));
writeFileSync(join(scratch, "openapi.json"), text);
execFileSync(
  join(here, "node_modules/.bin/openapi-typescript"),
  [join(scratch, "openapi.json"), "--output", join(scratch, "schema.d.ts")],
  { stdio: ["ignore", "ignore", "inherit"] },
);
const types = readFileSync(join(scratch, "schema.d.ts"), "utf8");

const targets = [
  ["openapi.json", text],
  ["src/schema.d.ts", types],
];
if (flag === "--check") {
  const stale = targets.filter(([file, fresh]) => {
    try {
      return readFileSync(join(here, file), "utf8") !== fresh;
    } catch {
      return true;
    }
  });
  for (const [file] of stale) {
    const fresh = join(scratch, file.split("/").pop());
    console.error(`clients/typescript/${file} differs from the served document (fresh: ${fresh})`);
  }
  if (stale.length > 0) {
    console.error("regenerate: scripts/client-tests.sh --regenerate, and commit");
    process.exit(1);
  }
} else {
  for (const [file, fresh] of targets) writeFileSync(join(here, file), fresh);
}
