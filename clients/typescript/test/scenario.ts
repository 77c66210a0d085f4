// What a program built on the typed client does, against a running UltiCode: every call below
// is checked by the compiler against the generated types, so a path, parameter or field that
// the API renamed or dropped fails the build; the answers are then checked at run time.
//
//   node dist/test/scenario.js BASE_URL ADMIN_PASSWORD
import { createClient, type Schemas } from "../src/index.js";

const [base, adminPassword] = process.argv.slice(2);
if (!base || !adminPassword) {
  console.error("usage: node dist/test/scenario.js BASE_URL ADMIN_PASSWORD");
  process.exit(2);
}

let passed = 0;
let failed = 0;
async function step(name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
    passed += 1;
    console.log(`ok ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`FAILED ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

const anonymous = createClient(base);
const suffix = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
const username = `client-${suffix}`;
const password = "typed client password";
let language = "";
let userToken = "";
let submissionId = 0;

await step("languages are listed", async () => {
  const { data, response } = await anonymous.GET("/api/v1/languages");
  check(response.status === 200 && data, `status ${response.status}`);
  const ids = data.map((l: Schemas["LanguageView"]) => l.id);
  check(ids.includes("python3"), `python3 not among ${ids.join(", ")}`);
  language = "python3";
});

await step("an account is registered and logs in", async () => {
  const created = await anonymous.POST("/api/v1/auth/register", { body: { username, password } });
  check(created.response.status === 201 && created.data, `register: ${created.response.status}`);
  check(created.data.username === username && created.data.role === "user", "account fields");
  const login = await anonymous.POST("/api/v1/auth/login", { body: { username, password } });
  check(login.data, `login: ${login.response.status}`);
  check(login.data.token_type === "Bearer" && login.data.expires_in > 0, "token fields");
  userToken = login.data.access_token;
});

await step("a wrong password is a typed problem", async () => {
  const { error, response } = await anonymous.POST("/api/v1/auth/login", {
    body: { username, password: "not the password" },
  });
  check(response.status === 401 && error, `status ${response.status}`);
  check(response.headers.get("content-type")?.startsWith("application/problem+json"), "media type");
  check(error.status === 401 && error.type.length > 0, JSON.stringify(error));
});

await step("problems are listed and read", async () => {
  const user = createClient(base, userToken);
  const page = await user.GET("/api/v1/problems", { params: { query: { limit: 100 } } });
  check(page.data, `list: ${page.response.status}`);
  check(page.data.items.some((p: Schemas["ProblemView"]) => p.slug === "aplusb"), "aplusb listed");
  const problem = await user.GET("/api/v1/problems/{slug}", { params: { path: { slug: "aplusb" } } });
  check(problem.data, `get: ${problem.response.status}`);
  check(problem.data.samples.length > 0 && problem.data.time_limit_ms > 0, "samples and limits");
});

await step("a bound outside the document is refused, not clamped", async () => {
  const user = createClient(base, userToken);
  const { error, response } = await user.GET("/api/v1/problems", { params: { query: { limit: 100000 } } });
  check(response.status === 422 && error, `status ${response.status}`);
});

await step("a submission is accepted once per idempotency key and judged", async () => {
  const user = createClient(base, userToken);
  const request = {
    params: { header: { "Idempotency-Key": `client-${suffix}` } },
    body: { problem: "aplusb", language, source: "a, b = map(int, input().split())\nprint(a + b)\n" },
  };
  const first = await user.POST("/api/v1/submissions", request);
  check(first.response.status === 202 && first.data, `submit: ${first.response.status}`);
  submissionId = first.data.id;
  const again = await user.POST("/api/v1/submissions", request);
  check(again.data?.id === submissionId, `replay: ${again.response.status} ${again.data?.id}`);
  let view: Schemas["SubmissionView"] | undefined;
  for (let i = 0; i < 600; i += 1) {
    const { data } = await user.GET("/api/v1/submissions/{id}", {
      params: { path: { id: submissionId } },
    });
    if (data?.status.state === "done") {
      view = data;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  check(view, "no verdict within 60 s");
  check(view.status.verdict === "AC", `verdict ${view.status.verdict}`);
  check(view.history.length === 1 && view.history[0]?.verdict === "AC", "history");
});

await step("an unknown language is a 422 problem", async () => {
  const user = createClient(base, userToken);
  const { error, response } = await user.POST("/api/v1/submissions", {
    body: { problem: "aplusb", language: "no-such-language", source: "x" },
  });
  check(response.status === 422 && error, `status ${response.status}`);
});

await step("a setter's problem is created and changed by its author only", async () => {
  const login = await anonymous.POST("/api/v1/auth/login", {
    body: { username: "admin", password: adminPassword },
  });
  check(login.data, `admin login: ${login.response.status}`);
  const admin = createClient(base, login.data.access_token);
  const body: Schemas["NewProblem"] = {
    slug: `typed-${suffix}`,
    title: "Typed client",
    statement: "Print $a+b$.",
    tags: ["client"],
    visibility: "hidden",
  };
  const created = await admin.POST("/api/v1/problems", { body });
  check(created.response.status === 201 && created.data, `create: ${created.response.status}`);
  check(created.data.visibility === "hidden" && !created.data.has_test_data, "created fields");
  const patched = await admin.PATCH("/api/v1/problems/{slug}", {
    params: { path: { slug: body.slug } },
    body: { title: "Typed client, renamed", visibility: "public" },
  });
  check(patched.data?.title === "Typed client, renamed", `patch: ${patched.response.status}`);
  const denied = await createClient(base, userToken).PATCH("/api/v1/problems/{slug}", {
    params: { path: { slug: body.slug } },
    body: { title: "not mine" },
  });
  check(denied.response.status === 403, `a user's patch: ${denied.response.status}`);
});

console.log(`client: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
