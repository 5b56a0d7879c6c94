// kube-apiserver's RBAC authorizer reads roles and bindings through an informer, so a binding just
// written takes effect a moment later (the emulator applied it at once). Tests that grant
// something wait here until the server's own SubjectAccessReview says it is granted.

import type { KubeTestClient } from "../../support/kube/kube-client.js";
import { until } from "./until.js";

export interface PolicyRule {
  apiGroups: string[];
  /** `resource` or `resource/subresource`. */
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export interface Subject {
  user: string;
  groups: readonly string[];
}

/** Waits until `subject` is allowed the first verb on the first resource (and name) of each rule. */
export async function rulesInEffect(
  admin: KubeTestClient,
  subject: Subject,
  rules: readonly PolicyRule[],
): Promise<void> {
  for (const rule of rules) {
    const [resource, subresource] = (rule.resources[0] ?? "").split("/");
    const attributes = {
      group: rule.apiGroups[0] ?? "",
      resource,
      verb: rule.verbs[0],
      ...(subresource ? { subresource } : {}),
      ...(rule.resourceNames?.[0] ? { name: rule.resourceNames[0] } : {}),
    };
    await until(
      async () => {
        const res = await admin.request<{ status?: { allowed?: boolean } }>(
          "POST",
          "/apis/authorization.k8s.io/v1/subjectaccessreviews",
          {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: { user: subject.user, groups: subject.groups, resourceAttributes: attributes },
          },
        );
        return res.body.status?.allowed === true;
      },
      `RBAC granting ${subject.user} ${JSON.stringify(attributes)}`,
    );
  }
}
