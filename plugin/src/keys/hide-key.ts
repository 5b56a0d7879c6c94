// Keeps a key the plugin just generated out of any error message built from a server answer.

/** A server message never carries the key we sent, should it quote the object. */
export function hideKey(err: unknown, key: string): unknown {
  if (err instanceof Error && err.message.includes(key)) {
    err.message = err.message.split(key).join("<redacted>");
  }
  return err;
}
