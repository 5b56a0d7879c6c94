// The KubeApi used by `vgate serve --dev` when no kubeconfig is found: every check that needs the
// API server fails closed with a message that says why.

import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { newServiceUnavailable } from "../shared/status.js";
import type { AccessDecision, KubeApi, ResourceMapping } from "./ports.js";

const WHY =
  "no Kubernetes API server is configured (vgate serve --dev without --kubeconfig or KUBECONFIG)";

export class UnavailableApi implements KubeApi {
  async getAccessKey(name: string): Promise<OwnedAccessKey | null> {
    throw newServiceUnavailable(
      `cannot check whether access key ${JSON.stringify(name)} exists: ${WHY}`,
    );
  }
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceMapping | null> {
    throw newServiceUnavailable(`cannot map ${apiVersion} ${kind} to a resource: ${WHY}`);
  }
  async subjectAccessReview(): Promise<AccessDecision> {
    throw newServiceUnavailable(`cannot ask for a SubjectAccessReview: ${WHY}`);
  }
  async ready(): Promise<boolean> {
    return false;
  }
}
