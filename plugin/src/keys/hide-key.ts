// Keeps a key the plugin just generated, and the hash it may have sent instead (OAK-24), out of
// any error message built from a server answer.

import { HASH_PREFIX, hashKey } from "../../../webhook/src/accesskeys/key-hash.js";

/** A server message never carries the key we sent (or its hash), should it quote the object. */
export function hideKey(err: unknown, key: string): unknown {
  if (!(err instanceof Error)) return err;
  const hex = hashKey(key).slice(HASH_PREFIX.length);
  let message = err.message;
  for (const form of [`${HASH_PREFIX}${hex}`, hex, key])
    message = message.split(form).join("<redacted>");
  err.message = message;
  return err;
}
