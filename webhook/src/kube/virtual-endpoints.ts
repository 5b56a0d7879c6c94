// Reads virtual Endpoints from the virtual cluster (vgate serve --virtual-kubeconfig), so the host
// side's expressions see the real context.virtualObject rather than one rebuilt from bookkeeping.

import type { ClientConfig as KubeConfig } from "../shared/client-config.js";
import type { JsonObject } from "../patches/types.js";
import { describeAnswer, describeError, unavailable } from "./fail-closed.js";
import { KubeTransport } from "../shared/transport.js";

export class VirtualEndpointsReader {
  private readonly transport: KubeTransport;

  constructor(kc: KubeConfig, timeoutMs = 2000) {
    this.transport = new KubeTransport(kc, { timeoutMs });
  }

  /** The virtual Endpoints, or null when it does not exist. Throws a 503 KubeError when unreachable. */
  async get(namespace: string, name: string): Promise<JsonObject | null> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/endpoints/${encodeURIComponent(name)}`;
    const check = `read virtual endpoints ${namespace}/${name}`;
    let res;
    try {
      res = await this.transport.request("GET", path);
    } catch (err) {
      throw unavailable(check, describeError(err), (t) => this.transport.redact(t));
    }
    if (res.status === 404) return null;
    if (res.status !== 200 || !res.body || typeof res.body !== "object") {
      throw unavailable(check, describeAnswer(res), (t) => this.transport.redact(t));
    }
    return res.body as JsonObject;
  }

  close(): void {
    this.transport.close();
  }
}
