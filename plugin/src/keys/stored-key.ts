// What the plugin sends as spec.key for a key it made (docs/decisions.md OAK-24). With hashed
// storage vgate would only keep sha256:<hex> of it, so the plugin sends that hash itself and the
// key never leaves this machine: not to the API server, its audit log, etcd or any webhook. It
// sends the key itself only when vgate says it stores keys plain (the ConfigMap vgate-info); when
// it cannot tell, it sends the hash, which either storage mode accepts and logs in with.

import { hashKey } from "../../../webhook/src/shared/key-hash.js";
import type { AccessKeyApi } from "../kube/api.js";

export async function keyToSend(
  api: AccessKeyApi,
  vgateNamespace: string,
  key: string,
): Promise<string> {
  return (await api.keyStorage(vgateNamespace)) === "plain" ? key : hashKey(key);
}
