// `glmrt serve` of the build tree as a child process for the tests: started
// on a free loopback port (--port 0, read back from its startup line),
// stopped with SIGTERM. The test environment (see ../CMakeLists.txt) names
// the binary, profile and model.
import { spawn } from "node:child_process";

export const env = {
  bin: process.env.GLMRT_BIN,
  profile: process.env.GLMRT_PROFILE,
  model: process.env.GLMRT_MODEL,
  artifacts: process.env.GLMRT_ARTIFACTS,
  rssGrowthLimitMb: Number(process.env.GLMRT_RSS_GROWTH_LIMIT_MB || 64),
};

// The bundled demo model (a trained one: its answers read like text).
export const demo = {
  profile: process.env.GLMRT_DEMO_PROFILE,
  model: process.env.GLMRT_DEMO_MODEL,
};

// `model` overrides the environment's profile and model: {profile, model}.
export async function startServer(extraArgs = [], model = {}) {
  for (const [key, value] of Object.entries(env))
    if (value === undefined) throw new Error(`the test environment lacks ${key} (run through ctest)`);
  const profile = model.profile ?? env.profile;
  const dir = model.model ?? env.model;
  const args = ["serve", "--profile", profile, "--model", dir, "--port", "0", ...extraArgs];
  const child = spawn(env.bin, args, { stdio: ["ignore", "inherit", "pipe"] });
  let log = "";
  let exit = null;
  const exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    }),
  );
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("glmrt serve did not start in 60 s:\n" + log)), 60000);
    child.stderr.on("data", (data) => {
      log += data;
      const m = log.match(/ on http:\/\/[^:]+:(\d+)\//);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`glmrt serve exited (${code ?? signal}) before listening:\n${log}`));
    });
  });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    log: () => log,
    exited,
    signal: (name) => child.kill(name),
    // SIGTERM, then the exit; a server that does not exit in time is killed
    // and reported.
    async stop(timeoutMs = 30000) {
      if (!exit) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

// A Prometheus metric of `text` (the first sample of that name).
export function metric(text, name) {
  const m = text.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m"));
  return m ? Number(m[1]) : NaN;
}

export async function metrics(url, headers = {}) {
  const r = await fetch(url + "/metrics", { headers });
  return r.text();
}

// Polls until predicate() is true; throws after timeoutMs.
export async function waitFor(predicate, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
