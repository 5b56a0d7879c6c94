// kube's error texts as the contract tests expect them. Where two clusters or releases may
// word a part differently (an admission webhook's prefix, Go's formatting of a value), the pattern
// leaves that part open and pins the rest.

export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `admission webhook "NAME" denied the request: `, as kube-apiserver prefixes a denial. */
export const WEBHOOK_PREFIX = `admission webhook "[^"]+" denied the request: `;

/** `<resource>.<group>`, as kube names a resource in messages. */
export const qualified = (group: string): string => `ownedaccesskeys.${group}`;

/** kube's AlreadyExists message, optionally after an admission webhook's prefix. */
export function alreadyExists(group: string, name: string): RegExp {
  return new RegExp(
    `^(${WEBHOOK_PREFIX})?${escapeRegExp(`${qualified(group)} "${name}" already exists`)}$`,
  );
}

/** registry.OptimisticLockErrorMsg inside kube's Conflict message. */
export function staleConflict(group: string, name: string): string {
  return (
    `Operation cannot be fulfilled on ${qualified(group)} "${name}": the object has been ` +
    "modified; please apply your changes to the latest version and try again"
  );
}

/** The message of a 422 Invalid: `OwnedAccessKey.<group> "<name>" is invalid: <details>`. */
export function invalidPrefix(group: string, name: string): string {
  return `OwnedAccessKey.${group} "${name}" is invalid: `;
}

/** The prefix of a denial by vgate's validating webhook (named in manifests/). */
export function validatingDenial(group: string): string {
  return `admission webhook "validate.${qualified(group)}" denied the request: `;
}
