// The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins of kube-apiserver, reading
// their configurations from the emulator's store (admissionregistration.k8s.io/v1).
//
// Mutating webhooks run one after another, configurations in name order and webhooks in their
// order; each sees the object as the ones before it left it, and JSONPatch answers are applied.
// With reinvocationPolicy IfNeeded a webhook runs a second time when a later one changed the object
// (mutating/reinvocationcontext.go). Validating webhooks run in parallel and the first error to
// arrive rejects the request (validating/dispatcher.go). Errors are kube's:
// - a denial: ToStatusErr, `admission webhook "x" denied the request: <message>`, the webhook's
//   code (400 when it is below 400), reason and details;
// - a failed call with failurePolicy Fail: 500 `Internal error occurred: failed calling webhook
//   "x": ...`; with Ignore the webhook is skipped;
// - dry run to a webhook whose sideEffects is not None/NoneOnDryRun: 400 BadRequest
//   `admission webhook "x" does not support dry run`, whatever the failurePolicy.
// Warnings are collected in webhook order (kube adds them as the calls return); a rejection carries
// the ones collected so far (AdmissionWebhookError.warnings), since kube sends them with errors too.

import fastJsonPatch from "fast-json-patch";
import { isDeepStrictEqual } from "node:util";
import {
  asKubeError,
  KubeError,
  newBadRequest,
  type StatusReason,
} from "../../../webhook/src/api/status.js";
import type { AdmissionAttributes, AdmissionHook, AdmissionOutcome } from "./admission-types.js";
import type { ResourceRegistry, ResourceType } from "./resources.js";
import type { KubeObject, ObjectStore } from "./store.js";
import { callWebhook, versioned, type CallOptions, type WebhookAnswer } from "./webhook-call.js";
import {
  internalError,
  isExemptFromWebhooks,
  shouldCallHook,
  type MatchEnvironment,
  type RuleWithOperations,
  type Webhook,
  type WebhookInvocation,
} from "./webhook-matching.js";

export const ADMISSIONREGISTRATION_V1 = "admissionregistration.k8s.io/v1";

export type ConfigurationKind = "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration";

export interface AdmissionWebhooksOptions {
  /** Overrides every webhook's timeoutSeconds, in milliseconds (keeps timeout tests fast). */
  timeoutMs?: number;
  /** The AdmissionReview request uid; a random UUID unless set. */
  uid?: () => string;
}

/** A KubeError that rejected a write, with the webhook warnings collected before it. */
export class AdmissionWebhookError extends KubeError {
  constructor(
    err: KubeError,
    readonly warnings: string[],
  ) {
    super(err.code, err.reason, err.message, err.details);
  }
}

type Json = Record<string, unknown>;

const str = (v: unknown, fallback: string): string => (typeof v === "string" && v ? v : fallback);

/** One webhook entry of a configuration with SetDefaults_*Webhook applied. */
export function webhookFromConfig(configurationName: string, raw: Json, index: number): Webhook {
  const rules = (Array.isArray(raw.rules) ? raw.rules : []) as RuleWithOperations[];
  const name = str(raw.name, "");
  return {
    uid: `${configurationName}/${name}/${index}`,
    configurationName,
    name,
    clientConfig: (raw.clientConfig ?? {}) as Webhook["clientConfig"],
    rules: rules.map((r) => ({ ...r, scope: r.scope ?? "*" })),
    failurePolicy: str(raw.failurePolicy, "Fail"),
    matchPolicy: str(raw.matchPolicy, "Equivalent"),
    namespaceSelector: (raw.namespaceSelector ?? {}) as Webhook["namespaceSelector"],
    objectSelector: (raw.objectSelector ?? {}) as Webhook["objectSelector"],
    ...(typeof raw.sideEffects === "string" ? { sideEffects: raw.sideEffects } : {}),
    timeoutSeconds: typeof raw.timeoutSeconds === "number" ? raw.timeoutSeconds : 10,
    admissionReviewVersions: Array.isArray(raw.admissionReviewVersions)
      ? (raw.admissionReviewVersions as string[])
      : [],
    reinvocationPolicy: str(raw.reinvocationPolicy, "Never"),
  };
}

/** The webhooks of `configurations`, sorted by configuration name, then in their own order. */
export function webhooksOf(configurations: readonly KubeObject[]): Webhook[] {
  return [...configurations]
    .sort((a, b) =>
      a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
    )
    .flatMap((c) =>
      (Array.isArray(c.webhooks) ? (c.webhooks as Json[]) : []).map((w, i) =>
        webhookFromConfig(c.metadata.name, w, i),
      ),
    );
}

/**
 * errors.ToStatusErr: the webhook's status with the message prefixed, a code below 400 raised to
 * 400 (a rejection must never look like success), and status Failure.
 */
export function toStatusErr(webhookName: string, result: Json | undefined): KubeError {
  const deniedBy = `admission webhook ${JSON.stringify(webhookName)} denied the request`;
  const code = typeof result?.code === "number" && result.code >= 400 ? result.code : 400;
  const reason = typeof result?.reason === "string" ? result.reason : "";
  const message = typeof result?.message === "string" ? result.message : "";
  const text = message
    ? `${deniedBy}: ${message}`
    : reason
      ? `${deniedBy}: ${reason}`
      : `${deniedBy} without explanation`;
  const details =
    result?.details && typeof result.details === "object" ? result.details : undefined;
  // The reason is the webhook's own, possibly empty, exactly as kube passes it on.
  return new KubeError(code, reason as StatusReason, text, details as KubeError["details"]);
}

/** The webhook's dry-run check, done before calling it (callAttrMutatingHook, callHook). */
function dryRunCheck(hook: Webhook, attrs: AdmissionAttributes): KubeError | string | null {
  if (!attrs.dryRun) return null;
  if (hook.sideEffects === undefined) {
    return `failed calling webhook ${JSON.stringify(hook.name)}: Webhook SideEffects is nil`;
  }
  if (hook.sideEffects === "None" || hook.sideEffects === "NoneOnDryRun") return null;
  return newBadRequest(`admission webhook ${JSON.stringify(hook.name)} does not support dry run`);
}

/** evanphx/json-patch's words for the failures fast-json-patch reports. */
function patchErrorText(err: unknown): string {
  const e = err as { name?: string; message?: string; operation?: { op?: string; path?: string } };
  const op = e.operation?.op ?? "";
  const path = e.operation?.path ?? "";
  switch (e.name) {
    case "OPERATION_PATH_UNRESOLVABLE":
      return op === "remove"
        ? `Unable to remove nonexistent key: ${path.split("/").pop() ?? ""}: missing value`
        : `${op} operation does not apply: doc is missing key: ${path}: missing value`;
    case "OPERATION_PATH_CANNOT_ADD":
      return `add operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`;
    case "TEST_OPERATION_FAILED":
      return `testing value ${path} failed: test failed`;
    case "OPERATION_OP_INVALID":
      return `Unexpected kind: ${op}`;
    default:
      return String(e.message ?? err).split("\n")[0]!;
  }
}

type PatchOutcome = { object: KubeObject; changed: boolean } | KubeError | { callError: string };

/** Applies a mutating webhook's JSONPatch to the object, in the webhook's version. */
function applyWebhookPatch(
  invocation: WebhookInvocation,
  attrs: AdmissionAttributes,
  answer: WebhookAnswer,
): PatchOutcome | null {
  const name = JSON.stringify(invocation.webhook.name);
  let ops: unknown;
  try {
    ops = JSON.parse(answer.patch!.toString("utf8"));
  } catch (err) {
    return {
      callError: `received undecodable patch in webhook response: ${(err as Error).message}`,
    };
  }
  if (!Array.isArray(ops)) {
    return {
      callError:
        "received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch",
    };
  }
  if (ops.length === 0) return null;
  if (!attrs.object) {
    return internalError(
      `admission webhook ${name} attempted to modify the object, which is not supported for this operation`,
    );
  }
  if (answer.patchType !== "JSONPatch") {
    return { callError: `unsupported patch type ${JSON.stringify(answer.patchType)}` };
  }
  const before = versioned(attrs.object, invocation, attrs)!;
  let after: KubeObject;
  try {
    after = fastJsonPatch.applyPatch(structuredClone(before), ops, true, false)
      .newDocument as KubeObject;
  } catch (err) {
    return internalError(patchErrorText(err));
  }
  // Back to the request's version, as kube converts the versioned object back.
  if (attrs.object.apiVersion !== undefined) after.apiVersion = attrs.object.apiVersion;
  return { object: after, changed: !isDeepStrictEqual(attrs.object, after) };
}

interface MutationState {
  /** The request with the object as the webhooks so far left it. */
  attrs: AdmissionAttributes;
  warnings: string[];
  reinvoke: Set<string>;
  previouslyInvoked: Set<string>;
}

export class AdmissionWebhooks implements AdmissionHook {
  private readonly env: MatchEnvironment;
  private readonly callOptions: CallOptions;

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
    options: AdmissionWebhooksOptions = {},
  ) {
    this.env = {
      namespace: (name) => this.find("v1", "Namespace", "", name),
      versionsOf: (group, resource) => this.versionsOf(group, resource),
    };
    this.callOptions = {
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.uid ? { uid: options.uid } : {}),
      lookup: (kind, namespace, name) => this.find("v1", kind, namespace, name),
    };
  }

  /** The configured webhooks of one kind, in the order kube calls (mutating) or lists them. */
  webhooks(kind: ConfigurationKind): Webhook[] {
    const type = this.registry.lookup(ADMISSIONREGISTRATION_V1, kind);
    return type ? webhooksOf(this.store.list(type, "")) : [];
  }

  async mutate(attrs: AdmissionAttributes): Promise<AdmissionOutcome> {
    if (isExemptFromWebhooks(attrs.type)) return { object: attrs.object, warnings: [] };
    const hooks = this.webhooks("MutatingWebhookConfiguration");
    const state: MutationState = {
      attrs,
      warnings: [],
      reinvoke: new Set(),
      previouslyInvoked: new Set(),
    };
    try {
      await this.mutationRound(hooks, state, 0);
      if (state.reinvoke.size > 0) await this.mutationRound(hooks, state, 1);
    } catch (err) {
      throw new AdmissionWebhookError(asKubeError(err), state.warnings);
    }
    return { object: state.attrs.object, warnings: state.warnings };
  }

  /**
   * One pass over the mutating webhooks. reinvocationcontext.go: when a webhook changes the object,
   * the IfNeeded webhooks called before it are marked; round 1 calls only those.
   */
  private async mutationRound(hooks: Webhook[], state: MutationState, round: 0 | 1): Promise<void> {
    for (const hook of hooks) {
      const invocation = shouldCallHook(hook, state.attrs, this.env);
      if (invocation instanceof KubeError) throw invocation;
      if (!invocation || (round === 1 && !state.reinvoke.has(hook.uid))) continue;
      const changed = await this.callMutating(invocation, state.attrs, state.warnings);
      if (changed) {
        state.attrs = { ...state.attrs, object: changed };
        for (const uid of state.previouslyInvoked) state.reinvoke.add(uid);
        state.previouslyInvoked.clear();
      }
      if (hook.reinvocationPolicy === "IfNeeded") state.previouslyInvoked.add(hook.uid);
    }
  }

  async validate(attrs: AdmissionAttributes): Promise<{ warnings: string[] }> {
    if (isExemptFromWebhooks(attrs.type)) return { warnings: [] };
    const invocations: WebhookInvocation[] = [];
    for (const hook of this.webhooks("ValidatingWebhookConfiguration")) {
      const invocation = shouldCallHook(hook, attrs, this.env);
      if (invocation instanceof KubeError) throw new AdmissionWebhookError(invocation, []);
      if (invocation) invocations.push(invocation);
    }
    const perHook: string[][] = invocations.map(() => []);
    let first: KubeError | undefined;
    await Promise.all(
      invocations.map(async (invocation, i) => {
        const err = await this.callValidating(invocation, attrs, perHook[i]!);
        first ??= err ?? undefined;
      }),
    );
    const warnings = perHook.flat();
    if (first) throw new AdmissionWebhookError(first, warnings);
    return { warnings };
  }

  /** One mutating call: the changed object, null when unchanged, or a thrown KubeError. */
  private async callMutating(
    invocation: WebhookInvocation,
    attrs: AdmissionAttributes,
    warnings: string[],
  ): Promise<KubeObject | null> {
    const hook = invocation.webhook;
    const failOpen = hook.failurePolicy === "Ignore";
    const callFailed = (callError: string): null => {
      if (failOpen) return null;
      throw internalError(callError);
    };
    const dry = dryRunCheck(hook, attrs);
    if (dry instanceof KubeError) throw dry;
    if (typeof dry === "string") return callFailed(dry);
    const result = await callWebhook(invocation, attrs, true, this.callOptions);
    if ("callError" in result) return callFailed(result.callError);
    const answer = result.answer;
    warnings.push(...answer.warnings);
    if (!answer.allowed) throw toStatusErr(hook.name, answer.result);
    if (!answer.patch || answer.patch.length === 0) return null;
    const outcome = applyWebhookPatch(invocation, attrs, answer);
    if (outcome === null) return null;
    if (outcome instanceof KubeError) throw outcome;
    if ("callError" in outcome) {
      return callFailed(
        `failed calling webhook ${JSON.stringify(hook.name)}: ${outcome.callError}`,
      );
    }
    return outcome.changed ? outcome.object : null;
  }

  /** One validating call: the error it rejects the request with, or null. */
  private async callValidating(
    invocation: WebhookInvocation,
    attrs: AdmissionAttributes,
    warnings: string[],
  ): Promise<KubeError | null> {
    const hook = invocation.webhook;
    const callFailed = (callError: string): KubeError | null =>
      hook.failurePolicy === "Ignore" ? null : internalError(callError);
    const dry = dryRunCheck(hook, attrs);
    if (dry instanceof KubeError) return dry;
    if (typeof dry === "string") return callFailed(dry);
    const result = await callWebhook(invocation, attrs, false, this.callOptions);
    if ("callError" in result) return callFailed(result.callError);
    warnings.push(...result.answer.warnings);
    return result.answer.allowed ? null : toStatusErr(hook.name, result.answer.result);
  }

  private find(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
  ): KubeObject | undefined {
    const type = this.registry.lookup(apiVersion, kind);
    return type && this.store.get(type, namespace, name);
  }

  private versionsOf(group: string, resource: string): ResourceType[] {
    const versions = this.registry.groups().find((g) => g.group === group)?.versions ?? [];
    return versions
      .map((v) => this.registry.byResource(group, v, resource))
      .filter((t): t is ResourceType => t !== undefined);
  }
}
