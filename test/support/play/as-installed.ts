// Checks, for the playgrounds' tests, that a running cluster has vgate configured as manifests/
// installs it, and that a key logs in with a key-only kubeconfig while a garbage token and a
// disabled key are refused as kube-apiserver refuses them. They drive the cluster as a user does:
// kubectl with the admin kubeconfig (`env`), and plain HTTPS for the refusals' status codes.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { manifestKeyStorage, manifestServeFlags } from "../cluster.js";
import { repoFile, repoRoot } from "../fixtures.js";
import { httpsRequest } from "../https-client.js";
import { untilValue } from "../until.js";

type Json = Record<string, unknown>;

/** Runs a command line with bash in `cwd`. */
export function sh(
  command: string,
  env: NodeJS.ProcessEnv,
  cwd = repoRoot,
  input?: string,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      "bash",
      ["-c", command],
      { cwd, env, timeout: 60_000, maxBuffer: 16 << 20 },
      (e, out, err) =>
        resolve({ code: e ? (typeof e.code === "number" ? e.code : 1) : 0, out, err }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

async function kubectlJson(args: string, env: NodeJS.ProcessEnv): Promise<Json> {
  const r = await sh(`kubectl ${args} -o json`, env);
  assert.equal(r.code, 0, `kubectl ${args}: ${r.err}`);
  return JSON.parse(r.out) as Json;
}

/**
 * Where `want` (from a manifest) and `have` (live) differ: every value `want` sets must be in
 * `have` as it is (server defaults may add fields). Paths as `a.b[0].c`.
 */
export function subsetDiffs(want: unknown, have: unknown, path = ""): string[] {
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length)
      return [`${path}: want ${JSON.stringify(want)}, have ${JSON.stringify(have)}`];
    return want.flatMap((w, i) => subsetDiffs(w, have[i], `${path}[${i}]`));
  }
  if (want && typeof want === "object") {
    if (!have || typeof have !== "object" || Array.isArray(have))
      return [`${path}: want an object, have ${JSON.stringify(have)}`];
    return Object.entries(want).flatMap(([k, w]) =>
      subsetDiffs(w, (have as Json)[k], path ? `${path}.${k}` : k),
    );
  }
  return want === have
    ? []
    : [`${path}: want ${JSON.stringify(want)}, have ${JSON.stringify(have)}`];
}

/**
 * The admission webhook configurations of manifests/webhook-configurations.yaml against the live
 * ones: the same webhooks, each with every field the manifest sets, except where it is served
 * (clientConfig: a Service on a cluster, a URL on the node-less one; the path must be the same)
 * and caBundle, which the installer fills in.
 */
export async function webhookConfigurationDiffs(env: NodeJS.ProcessEnv): Promise<string[]> {
  const diffs: string[] = [];
  const manifests = parseAllDocuments(repoFile("manifests/webhook-configurations.yaml"))
    .map((d) => d.toJS() as Json | null)
    .filter((o): o is Json => Boolean(o));
  assert.ok(manifests.length >= 2, "manifests/webhook-configurations.yaml has two configurations");
  for (const want of manifests) {
    const name = (want["metadata"] as { name: string }).name;
    const have = await kubectlJson(`get ${String(want["kind"]).toLowerCase()} ${name}`, env);
    const wantHooks = want["webhooks"] as Json[];
    const haveHooks = (have["webhooks"] as Json[] | undefined) ?? [];
    const names = (hooks: Json[]) => hooks.map((w) => String(w["name"]));
    diffs.push(
      ...subsetDiffs(
        names(wantHooks),
        names(haveHooks),
        `${String(want["kind"])}/${name} webhooks`,
      ),
    );
    for (const w of wantHooks) {
      const h = haveHooks.find((x) => x["name"] === w["name"]) ?? {};
      const { clientConfig: wantClient, ...rest } = w;
      const at = `${String(want["kind"])}/${name} ${String(w["name"])}`;
      diffs.push(...subsetDiffs(rest, h, at));
      const wantPath = (wantClient as { service?: { path?: string } }).service?.path;
      const haveClient = (h["clientConfig"] ?? {}) as { service?: { path?: string }; url?: string };
      const havePath =
        haveClient.service?.path ?? (haveClient.url && new URL(haveClient.url).pathname);
      if (havePath !== wantPath)
        diffs.push(`${at} clientConfig path: want ${wantPath}, have ${havePath}`);
      if (!(haveClient as { caBundle?: string }).caBundle) diffs.push(`${at}: no caBundle`);
    }
  }
  return diffs;
}

/** The command line of the live process `pid`. */
export function processArgs(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
}

/** The pids of running processes whose executable is named `name` and whose arguments match. */
export function findProcesses(name: string, match: (args: string[]) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = processArgs(Number(entry));
      if (args[0] && args[0].split("/").pop() === name && match(args)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/**
 * kube-apiserver's arguments against manifests/apiserver/kube-apiserver.flags: every flag of the
 * file is there (paths under /etc/kubernetes/vgate/ may be elsewhere; other values the same, the
 * token cache TTL included), and the AuthorizationConfiguration it reads is the file's, but for
 * where the webhook's kubeconfig is.
 */
export function apiserverWiringDiffs(args: readonly string[]): string[] {
  const diffs: string[] = [];
  const flags = repoFile("manifests/apiserver/kube-apiserver.flags")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("--"));
  const live = new Map(
    args
      .filter((a) => a.startsWith("--"))
      .map((a) => [a.split("=")[0]!, a.slice(a.indexOf("=") + 1)]),
  );
  for (const flag of flags) {
    const [name, value] = [flag.split("=")[0]!, flag.slice(flag.indexOf("=") + 1)];
    const have = live.get(name);
    if (have === undefined) diffs.push(`${name}: missing`);
    else if (value.startsWith("/etc/kubernetes/vgate/")) {
      if (!have.endsWith(`/${value.split("/").pop()!}`)) diffs.push(`${name}: ${have}`);
    } else if (have !== value) diffs.push(`${name}: want ${value}, have ${have}`);
  }
  if (live.has("--authorization-mode")) diffs.push("--authorization-mode is set");
  const authz = live.get("--authorization-config");
  if (authz) {
    const strip = (text: string) => {
      const config = parse(text) as { authorizers: { webhook?: Json }[] };
      for (const a of config.authorizers) delete a.webhook?.["connectionInfo"];
      return config;
    };
    diffs.push(
      ...subsetDiffs(
        strip(repoFile("manifests/apiserver/authorization-config.yaml")),
        strip(readFileSync(authz, "utf8")),
        "authorization-config.yaml",
      ),
    );
  }
  return diffs;
}

/**
 * Keys are stored as manifests/vgate-info.yaml says (hashed): the published ConfigMap says so, a
 * key a client sends in plain form is stored as sha256:<hex>, and a key without spec.key is
 * refused. The sample key applied here logs in. Leaves no key behind.
 */
export async function checkKeyStorage(
  env: NodeJS.ProcessEnv,
  server: { url: string; ca: string },
): Promise<void> {
  const mode = manifestKeyStorage();
  assert.equal(mode, "hashed");
  assert.ok(manifestServeFlags().includes("--key-storage=hashed"));
  const info = await kubectlJson("-n vgate-system get configmap vgate-info", env);
  assert.equal((info["data"] as Json)["keyStorage"], mode);
  const key = randomBytes(32).toString("base64url");
  const sample = (name: string, spec: Json) =>
    JSON.stringify({
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name },
      spec: { user: "sample-user", type: "User", ...spec },
    });
  const applied = await sh("kubectl apply -f -", env, repoRoot, sample("sample-key", { key }));
  assert.equal(applied.code, 0, applied.err);
  try {
    const stored = await kubectlJson("get oak sample-key", env);
    const storedKey = String((stored["spec"] as Json)["key"]);
    assert.match(storedKey, /^sha256:[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(stored).includes(key), "the plaintext key is stored somewhere");
    const who = await selfSubjectReview(server, key);
    assert.equal(who.status, 201, who.text);
    assert.equal(who.user, "sample-user");
  } finally {
    await sh("kubectl delete oak sample-key --ignore-not-found", env);
  }
  const keyless = await sh("kubectl create -f -", env, repoRoot, sample("sample-keyless", {}));
  assert.equal(keyless.code, 1);
  assert.match(keyless.err, /spec\.key: Required value: vgate stores keys hashed/);
}

/** POST a SelfSubjectReview with `token` as the only credential. */
async function selfSubjectReview(
  server: { url: string; ca: string },
  token: string,
): Promise<{ status: number; text: string; user?: string; body?: Json }> {
  const res = await httpsRequest(`${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
    method: "POST",
    ca: server.ca,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }),
    timeoutMs: 10_000,
  });
  let body: Json | undefined;
  try {
    body = JSON.parse(res.text) as Json;
  } catch {
    body = undefined;
  }
  const user = ((body?.["status"] as Json | undefined)?.["userInfo"] as Json | undefined)?.[
    "username"
  ];
  return {
    status: res.status,
    text: res.text,
    body,
    ...(typeof user === "string" ? { user } : {}),
  };
}

/** The server, CA and token of a kubeconfig (its first cluster and user). */
export function kubeconfigParts(path: string): {
  url: string;
  ca: string;
  token?: string;
  clientCert: boolean;
} {
  const kc = parse(readFileSync(path, "utf8")) as {
    clusters: { cluster: Record<string, string> }[];
    users: { user: Record<string, string> }[];
  };
  const cluster = kc.clusters[0]!.cluster;
  const user = kc.users[0]!.user;
  const caData = cluster["certificate-authority-data"];
  return {
    url: cluster["server"]!,
    ca: caData
      ? Buffer.from(caData, "base64").toString("utf8")
      : readFileSync(cluster["certificate-authority"]!, "utf8"),
    ...(user["token"] ? { token: user["token"] } : {}),
    clientCert: Object.keys(user).some((k) => k.startsWith("client-")),
  };
}

/** A refusal as kube-apiserver gives it: a Status with the code and reason. */
function assertRefused(
  r: { status: number; body?: Json; text: string },
  codes: readonly number[],
  what: string,
): void {
  assert.ok(codes.includes(r.status), `${what}: ${r.status} ${r.text}`);
  assert.equal(r.body?.["kind"], "Status", r.text);
  assert.equal(r.body?.["code"], r.status, r.text);
  assert.equal(r.body?.["reason"], r.status === 401 ? "Unauthorized" : "Forbidden", r.text);
}

/**
 * The playground's key-login steps (<dir>/key-login.sh) run from the checkout: the key-only
 * kubeconfig they write has no client certificate, mode 0600, and `kubectl auth whoami` with it
 * names the key's user. Then the same with `kubectl accesskey kubeconfig --key-file -`; a garbage
 * token is refused with 401; the key once disabled is refused (403 from vgate's authorizer while
 * kube-apiserver's token cache holds the login, then 401) and `kubectl auth whoami` fails.
 */
export async function checkKeyLogin(
  env: NodeJS.ProcessEnv,
  dir: string,
  user: string,
  keyName: string,
): Promise<void> {
  const script = join(dir, "key-login.sh");
  const run = await sh(`bash ${JSON.stringify(script)}`, env);
  assert.equal(run.code, 0, `${script}\n${run.out}${run.err}`);
  const keyKubeconfig = join(dir, `${keyName}.kubeconfig`);
  assert.equal(statSync(keyKubeconfig).mode & 0o777, 0o600);
  const parts = kubeconfigParts(keyKubeconfig);
  assert.equal(parts.clientCert, false, "the key's kubeconfig holds a client certificate");
  assert.ok(parts.token);
  assert.match(run.out, new RegExp(`^Username\\s+${user}$`, "m"), run.out);
  // The key the script printed, through `kubectl accesskey kubeconfig --key-file -`.
  const key = run.out.split("\n")[0]!.trim();
  assert.equal(key, parts.token);
  const viaStdin = await sh(
    `kubectl accesskey kubeconfig ${keyName} --key-file - > again.kubeconfig && kubectl --kubeconfig again.kubeconfig auth whoami -o jsonpath='{.status.userInfo.username}'; rm -f again.kubeconfig`,
    env,
    dir,
    `${key}\n`,
  );
  assert.equal(viaStdin.code, 0, viaStdin.err);
  assert.equal(viaStdin.out, user);
  const garbage = await selfSubjectReview(parts, randomBytes(32).toString("base64url"));
  assertRefused(garbage, [401], "a garbage token");
  const whoGarbage = await sh(
    `kubectl --kubeconfig ${keyKubeconfig} --token ${randomBytes(32).toString("base64url")} auth whoami`,
    env,
  );
  assert.equal(whoGarbage.code, 1);
  assert.match(whoGarbage.err, /You must be logged in to the server \(Unauthorized\)/);
  const disabled = await sh(`kubectl accesskey disable ${keyName}`, env);
  assert.equal(disabled.code, 0, disabled.err);
  try {
    // vgate's authorizer sees the disable through its watch, a moment after the write returns.
    const first = await untilValue(
      "a disabled key refused",
      () => selfSubjectReview(parts, key),
      (r) => r.status !== 201,
      5_000,
    );
    assertRefused(first, [401, 403], "a disabled key");
    const who = await sh(`kubectl --kubeconfig ${keyKubeconfig} auth whoami`, env);
    assert.equal(who.code, 1, who.out);
    // Once kube-apiserver's token cache (manifests/apiserver: 10 s) lets go of the login, 401.
    const later = await untilValue(
      "a disabled key refused with 401",
      () => selfSubjectReview(parts, key),
      (r) => r.status !== 403,
      30_000,
    );
    assertRefused(later, [401], "a disabled key");
  } finally {
    await sh(`kubectl accesskey delete ${keyName}`, env);
  }
}
