// JSON as JSON.parse returns it, and the one check that a value is a JSON object.

/** A JSON value: what JSON.parse returns and JSON.stringify writes back unchanged. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object: `{…}`, never an array or null. */
export type JsonObject = { [key: string]: Json };

/**
 * Whether a value is an object and not an array (nor null). Its prototype is not checked: JSON.parse
 * makes plain objects, and readers use own properties only (accesskeys/json-fields.ts `own`).
 */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
