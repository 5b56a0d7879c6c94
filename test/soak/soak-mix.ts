// The soak's request mix: admission (validate and mutate, CREATE and UPDATE), TokenReview (keys
// stored in the cluster, and unknown tokens) and SubjectAccessReview (a scoped key inside and
// outside its project's namespace, and a request that is no key login). Each kind builds a fresh
// body and checks its answer: well-formed, and the decision vgate must make.

import { randomBytes, randomUUID } from "node:crypto";
import { accessKeyExtra } from "../../webhook/src/auth/contracts.js";
import type { VgateCluster } from "../support/cluster.js";
import { accessKey, review } from "../support/reviews.js";
import { until } from "../support/until.js";
import type { Answer, Sent, TimedClient } from "./timed-client.js";

type Json = Record<string, unknown>;
const PROJECT_LABEL = "loft.sh/project";

export interface RequestKind {
  name: string;
  /** Relative weight in the mix. */
  weight: number;
  build(): Sent;
  /** What is wrong with the answer; undefined when it is right. */
  check(sent: Sent, answer: Answer): string | undefined;
}

/** What the mix needs in the cluster: stored keys and two labelled namespaces. */
export interface SoakFixtures {
  keys: { name: string; uid: string; token: string; user: string }[];
  scopedKey: { name: string; uid: string };
  inNamespace: string;
  outNamespace: string;
  extraName: string;
}

const json = (path: string, body: unknown): Sent => ({
  path,
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
});

function parse(answer: Answer): Json | string {
  if (answer.error) return `transport error ${answer.error}`;
  if (answer.status !== 200) return `HTTP ${answer.status}: ${answer.text.slice(0, 200)}`;
  try {
    return JSON.parse(answer.text) as Json;
  } catch {
    return `not JSON: ${answer.text.slice(0, 200)}`;
  }
}

function admission(name: string, path: string, body: () => Json, allowed: boolean): RequestKind {
  return {
    name,
    weight: 1,
    build: () => json(path, body()),
    check(sent, answer) {
      const got = parse(answer);
      if (typeof got === "string") return got;
      const uid = (JSON.parse(String(sent.body)) as { request: { uid: string } }).request.uid;
      const response = got.response as { uid?: string; allowed?: boolean } | undefined;
      if (got.kind !== "AdmissionReview" || response?.uid !== uid)
        return "not this review's answer";
      return response.allowed === allowed
        ? undefined
        : `allowed ${response.allowed}, want ${allowed}`;
    },
  };
}

const ADMIN = { groups: ["system:masters"] };

function admissionKinds(): RequestKind[] {
  const old = () => {
    const key = accessKey(`soak-${randomBytes(4).toString("hex")}`, { user: "alice" });
    const metadata = { ...(key.metadata as Json), uid: randomUUID(), resourceVersion: "7" };
    return { ...key, metadata } as Json;
  };
  const update = () => {
    const o = old();
    return { o, n: { ...o, spec: { ...(o.spec as Json), description: "rotated" } } };
  };
  const fresh = () => accessKey(`soak-${randomBytes(4).toString("hex")}`);
  return [
    admission(
      "validate CREATE",
      "/validate/ownedaccesskeys",
      () => review({ object: fresh(), ...ADMIN }),
      true,
    ),
    admission(
      "mutate CREATE",
      "/mutate/ownedaccesskeys",
      () => review({ object: fresh(), ...ADMIN }),
      true,
    ),
    admission(
      "validate UPDATE",
      "/validate/ownedaccesskeys",
      () => {
        const { o, n } = update();
        return review({ operation: "UPDATE", object: n, oldObject: o, ...ADMIN });
      },
      true,
    ),
    admission(
      "mutate UPDATE",
      "/mutate/ownedaccesskeys",
      () => {
        const { o, n } = update();
        return review({ operation: "UPDATE", object: n, oldObject: o, ...ADMIN });
      },
      true,
    ),
    // A user may not make a key for someone else.
    admission(
      "validate CREATE (denied)",
      "/validate/ownedaccesskeys",
      () =>
        review({
          object: accessKey(`soak-${randomBytes(4).toString("hex")}`, { user: "bob" }),
          username: "mallory",
        }),
      false,
    ),
  ];
}

function tokenReview(token: string): Json {
  return {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    metadata: { creationTimestamp: null },
    spec: { token },
    status: { user: {} },
  };
}

/** `users`: the user each stored key's token logs in as; any other token is unknown. */
function tokenKind(
  name: string,
  token: () => string,
  users: ReadonlyMap<string, string>,
): RequestKind {
  return {
    name,
    weight: 1,
    build: () => json("/authenticate", tokenReview(token())),
    check(sent, answer) {
      const sentToken = (JSON.parse(String(sent.body)) as { spec: { token: string } }).spec.token;
      const want = users.get(sentToken);
      const got = parse(answer);
      if (typeof got === "string") return got;
      const status = got.status as { authenticated?: boolean; user?: { username?: string } };
      if (got.kind !== "TokenReview" || typeof status?.authenticated !== "boolean")
        return "not a TokenReview";
      if (status.authenticated !== (want !== undefined))
        return `authenticated ${status.authenticated}`;
      return want === undefined || status.user?.username === want
        ? undefined
        : `user ${status.user?.username}`;
    },
  };
}

function accessReview(namespace: string, extra?: Json, uid?: string): Json {
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    metadata: { creationTimestamp: null },
    spec: {
      resourceAttributes: { namespace, verb: "list", version: "v1", resource: "pods" },
      user: "soak-scoped",
      groups: ["system:authenticated"],
      ...(uid ? { uid } : {}),
      ...(extra ? { extra } : {}),
    },
    status: { allowed: false },
  };
}

/** denied: whether vgate must deny (outside the key's scope) or give no opinion. */
function accessKind(name: string, body: () => Json, denied: boolean): RequestKind {
  return {
    name,
    weight: 1,
    build: () => json("/authorize", body()),
    check(_sent, answer) {
      const got = parse(answer);
      if (typeof got === "string") return got;
      const status = got.status as { allowed?: boolean; denied?: boolean } | undefined;
      if (got.kind !== "SubjectAccessReview" || status?.allowed !== false)
        return "not a SubjectAccessReview answer";
      return (status.denied === true) === denied
        ? undefined
        : `denied ${status.denied}, want ${denied}`;
    },
  };
}

export function soakKinds(f: SoakFixtures): RequestKind[] {
  let i = 0;
  const extra = { [f.extraName]: [f.scopedKey.name] };
  const users = new Map(f.keys.map((k) => [k.token, k.user]));
  return [
    ...admissionKinds(),
    tokenKind("TokenReview (key)", () => f.keys[i++ % f.keys.length]!.token, users),
    tokenKind("TokenReview (unknown)", () => randomBytes(32).toString("base64url"), users),
    accessKind("SAR (in scope)", () => accessReview(f.inNamespace, extra, f.scopedKey.uid), false),
    accessKind(
      "SAR (out of scope)",
      () => accessReview(f.outNamespace, extra, f.scopedKey.uid),
      true,
    ),
    accessKind("SAR (no key)", () => accessReview(f.outNamespace), false),
  ];
}

/**
 * Stores keys (one scoped to a project) and the project's namespaces through the rig's API server,
 * and waits until vgate's caches know them.
 */
export async function storeSoakFixtures(
  cluster: VgateCluster,
  client: TimedClient,
): Promise<SoakFixtures> {
  const run = randomBytes(3).toString("hex");
  const f: SoakFixtures = {
    keys: [],
    scopedKey: { name: "", uid: "" },
    inNamespace: `soak-in-${run}`,
    outNamespace: `soak-out-${run}`,
    extraName: accessKeyExtra("loft.sh"),
  };
  for (const [ns, project] of [
    [f.inNamespace, `soak-${run}`],
    [f.outNamespace, "other"],
  ] as const) {
    await cluster.admin.apply({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, labels: { [PROJECT_LABEL]: project } },
    });
  }
  for (let n = 0; n < 4; n++) {
    const scope = n === 0 ? { scope: { projects: [{ project: `soak-${run}` }] } } : {};
    const key = await storeKey(cluster, `soak-${run}-${n}`, `soak-user-${n}`, scope);
    f.keys.push(key);
    if (n === 0) f.scopedKey = key;
  }
  const kinds = soakKinds(f);
  for (const kind of kinds) {
    await until(
      async () => {
        const sent = kind.build();
        return kind.check(sent, await client.send(sent)) === undefined;
      },
      `vgate answers "${kind.name}" as expected`,
      30_000,
    );
  }
  return f;
}

async function storeKey(cluster: VgateCluster, name: string, user: string, more: Json) {
  const token = randomBytes(32).toString("base64url");
  const res = await cluster.admin.request("POST", `/apis/${cluster.group}/v1/ownedaccesskeys`, {
    apiVersion: `${cluster.group}/v1`,
    kind: "OwnedAccessKey",
    metadata: { name },
    spec: { user, type: "User", key: token, ...more },
  });
  if (res.status !== 201)
    throw new Error(`storing key ${name}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return { name, user, token, uid: (res.body as { metadata: { uid: string } }).metadata.uid };
}
