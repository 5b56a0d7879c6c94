// What the fault tests share: the review bodies kube-apiserver would send vgate (admissions that
// need the API server and one that does not, a TokenReview, a SubjectAccessReview), a steady-rate
// load that records every answer and its latency, and a private control plane with an in-process
// `vgate serve` talking straight to it (no proxy), for a real kube-apiserver restart.

import { randomBytes, randomUUID } from "node:crypto";
import { accessKeyExtra } from "../../webhook/src/auth/contracts.js";
import type { ServeOptions } from "../../webhook/src/cli/serve-options.js";
import type { StartedServe } from "../../webhook/src/cli/serve-runtime.js";
import { installAccessKeyCrd, VGATE_NAMESPACE } from "../support/cluster.js";
import { startInProcessVgate } from "../support/in-process-vgate.js";
import { startControlPlane, type ControlPlane } from "../support/kube/control-plane.js";
import { installCrd, schemalessCrd } from "../support/kube/crds.js";
import type { KubeTestClient } from "../support/kube/kube-client.js";
import { vgateRules } from "../support/kube/rbac.js";
import { serviceAccountWith } from "../support/kube/service-account.js";
import { httpsRequest } from "../support/https-client.js";
import { accessKey, review } from "../support/reviews.js";

type Json = Record<string, unknown>;

/** The deadline the fault tests give vgate (--admission-timeout): short, so the suite is fast. */
export const ADMISSION_TIMEOUT_MS = 2_000;
/**
 * How late past the deadline an answer may come: an event loop turn on a busy 2-core machine, TLS
 * and the test client's own scheduling. A hang would blow through it by seconds.
 */
export const DEADLINE_MARGIN_MS = 1_500;
/** A cluster admin's userInfo: allowed every API-independent rule. */
export const ADMIN_USER = { username: "root", groups: ["system:masters", "system:authenticated"] };

/** An AdmissionReview answer, or a Status answer / transport error, with how long it took. */
export interface Answer {
  kind: string;
  /** When the request was sent (ms since the epoch). */
  sentAt: number;
  ms: number;
  /** HTTP status; 0 when the request got no answer. */
  http: number;
  allowed?: boolean;
  code?: number;
  reason?: string;
  message?: string;
  /** For SubjectAccessReview: status.denied. */
  denied?: boolean;
  /** For TokenReview: status.authenticated and status.error. */
  authenticated?: boolean;
  error?: string;
}

/** Where vgate listens and how to reach it. */
export interface VgateTarget {
  url: string;
  ca: string;
  /** The client certificate vgate's review routes accept, as kube-apiserver presents it. */
  client: { cert: string; key: string };
}

/** Posts `body` to vgate's `path` and reads the decision, never throwing. */
export async function ask(
  target: VgateTarget,
  kind: string,
  path: string,
  body: unknown,
): Promise<Answer> {
  const sentAt = Date.now();
  try {
    const res = await httpsRequest(target.url + path, {
      body: JSON.stringify(body),
      headers: { "Content-Type": "application/json" },
      ca: target.ca,
      client: target.client,
      timeoutMs: 30_000,
    });
    const answer: Answer = { kind, sentAt, ms: Date.now() - sentAt, http: res.status };
    return { ...answer, ...decisionOf(res.json<Json>()) };
  } catch (err) {
    return { kind, sentAt, ms: Date.now() - sentAt, http: 0, error: (err as Error).message };
  }
}

function decisionOf(body: Json): Partial<Answer> {
  const response = body["response"] as Json | undefined;
  if (response) {
    const status = response["status"] as
      { code?: number; reason?: string; message?: string } | undefined;
    return {
      allowed: response["allowed"] === true,
      code: status?.code,
      reason: status?.reason,
      message: status?.message,
    };
  }
  const status = body["status"] as Json | undefined;
  if (body["kind"] === "TokenReview") {
    return {
      authenticated: status?.["authenticated"] === true,
      error: status?.["error"] as string,
    };
  }
  if (body["kind"] === "SubjectAccessReview") {
    return {
      allowed: status?.["allowed"] === true,
      denied: status?.["denied"] === true,
      reason: status?.["reason"] as string | undefined,
    };
  }
  return { code: body["code"] as number, message: body["message"] as string };
}

/** Review bodies about OwnedAccessKeys of `group`, whose owners are Users of `storageGroup`. */
export function reviewsFor(group: string, storageGroup: string, domain: string) {
  const key = (metadata: Json): Json => accessKey("", {}, metadata, group);
  const keyless = (metadata: Json): Json => accessKey("", { key: undefined }, metadata, group);
  return {
    /** A CREATE with only generateName: vgate picks a free name (the cache, or a GET per name). */
    generateName: (): Json =>
      review({
        ...ADMIN_USER,
        group,
        name: "",
        object: { ...key({ generateName: "fault-" }), metadata: { generateName: "fault-" } },
      }),
    /** A CREATE that sets blockOwnerDeletion: discovery, then a SubjectAccessReview (delete). */
    blockOwner: (owner = "alice"): Json =>
      review({
        ...ADMIN_USER,
        group,
        // No key: a write that sets one also waits for the key cache (newKey below).
        object: keyless({
          name: `owned-${randomBytes(3).toString("hex")}`,
          ownerReferences: [
            {
              apiVersion: `${storageGroup}/v1`,
              kind: "User",
              name: owner,
              uid: randomUUID(),
              blockOwnerDeletion: true,
            },
          ],
        }),
      }),
    /** A CREATE the validating webhook decides from the object alone (no key: nothing to compare). */
    plain: (): Json =>
      review({
        ...ADMIN_USER,
        group,
        object: accessKey(
          "",
          { key: undefined },
          { name: `plain-${randomBytes(3).toString("hex")}` },
          group,
        ),
      }),
    /** A CREATE with a key of its own: the duplicate-key check needs the synced key cache. */
    newKey: (): Json =>
      review({
        ...ADMIN_USER,
        group,
        object: key({ name: `new-key-${randomBytes(3).toString("hex")}` }),
      }),
    tokenReview: (token: string): Json => ({
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      spec: { token },
    }),
    /** Whether key `name` (uid `uid`) may list pods: no opinion for an unscoped key. */
    accessReview: (name: string, uid: string): Json => ({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        resourceAttributes: { namespace: "default", verb: "list", version: "v1", resource: "pods" },
        user: "alice",
        uid,
        groups: ["system:authenticated"],
        extra: { [accessKeyExtra(domain)]: [name] },
      },
    }),
  };
}

/** Requests sent at a fixed rate, each round one of every kind, without waiting for answers. */
export interface SteadyLoad {
  /** Stops sending; resolves with every answer once the last one is in. */
  stop(): Promise<Answer[]>;
}

export function steadyLoad(roundsPerSecond: number, round: (() => Promise<Answer>)[]): SteadyLoad {
  const pending: Promise<Answer>[] = [];
  const timer = setInterval(() => {
    for (const send of round) pending.push(send());
  }, 1000 / roundsPerSecond);
  return {
    stop: async () => {
      clearInterval(timer);
      return Promise.all(pending);
    },
  };
}

/** Summary figures of a set of answers, for the test's log and assertion messages. */
export function figures(answers: Answer[]): { count: number; maxMs: number; p99Ms: number } {
  const sorted = answers.map((a) => a.ms).sort((a, b) => a - b);
  const p99 = sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
  return { count: sorted.length, maxMs: sorted.at(-1) ?? 0, p99Ms: p99 };
}

/** A private control plane and an in-process vgate wired straight to its kube-apiserver. */
export interface PrivateVgate extends VgateTarget {
  plane: ControlPlane;
  admin: KubeTestClient;
  vgate: StartedServe;
  group: string;
  storageGroup: string;
  /** vgate's log, one JSON record a line. */
  logLines: string[];
  stop(): Promise<void>;
}

/**
 * Starts etcd and kube-apiserver, installs the OwnedAccessKey CRD of `domain` and a User kind
 * (storage.<domain>), vgate's service account and RBAC, and starts vgate with a bound token of it.
 */
export async function startPrivateVgate(
  domain: string,
  more: Partial<ServeOptions> = {},
): Promise<PrivateVgate> {
  const plane = await startControlPlane();
  try {
    const group = `management.${domain}`;
    const storageGroup = `storage.${domain}`;
    await installAccessKeyCrd(plane.admin, domain);
    await installCrd(plane.admin, schemalessCrd(storageGroup, "User", "users", { status: true }));
    const account = await serviceAccountWith(plane, "vgate", vgateRules(group), VGATE_NAMESPACE);
    const kubeconfig = await account.kubeconfig();
    const vgate = await startInProcessVgate({ kubeconfig, domain, logLevel: "info", more });
    return {
      plane,
      admin: plane.admin,
      vgate: vgate.vgate,
      url: vgate.url,
      ca: vgate.ca,
      client: vgate.client,
      group,
      storageGroup,
      logLines: vgate.logLines,
      stop: async () => {
        await vgate.stop();
        await plane.stop();
      },
    };
  } catch (err) {
    await plane.stop();
    throw err;
  }
}
