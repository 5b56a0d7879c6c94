// The `btoa` / `atob` expression helpers with the browser's (WHATWG "forgiving-base64") rules:
// strings are Latin-1 byte strings, anything else throws instead of being silently mangled.

/** Why a helper refused its input; thrown inside the sandbox, so the expression fails clearly. */
export class Base64Error extends Error {
  override readonly name = "InvalidCharacterError";
}

const ABOVE_LATIN1 = /[\u0100-\uffff]/;
const ASCII_WHITESPACE = /[\t\n\f\r ]/g;
const BASE64_BODY = /^[A-Za-z0-9+/]*$/;

/** btoa: "If data contains any code point greater than U+00FF, throw InvalidCharacterError." */
export function btoa(data: unknown): string {
  const text = String(data);
  if (ABOVE_LATIN1.test(text)) {
    throw new Base64Error("btoa: the string contains characters outside of the Latin1 range");
  }
  return Buffer.from(text, "latin1").toString("base64");
}

/** atob: forgiving-base64 decode; invalid length or alphabet throws InvalidCharacterError. */
export function atob(data: unknown): string {
  let text = String(data).replace(ASCII_WHITESPACE, "");
  // "If data's code point length divides by 4 leaving no remainder, then: if data ends with one
  // or two U+003D (=) code points, then remove them from data."
  if (text.length % 4 === 0) text = text.replace(/==?$/, "");
  // "If data's code point length divides by 4 leaving a remainder of 1, return failure."
  if (text.length % 4 === 1 || !BASE64_BODY.test(text)) {
    throw new Base64Error("atob: the string to be decoded is not correctly encoded");
  }
  return Buffer.from(text, "base64").toString("latin1");
}
