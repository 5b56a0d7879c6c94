// A JSON Patch (RFC 6902) applied as kube-apiserver applies a mutating webhook's patch, so that the
// judge can see the object vgate admitted. It works on a copy and writes every member with
// defineProperty: a key named __proto__ in the request (JSON.parse makes it an own key) stays a
// key, and no patch can reach a prototype of the fuzzer itself.

type Json = Record<string, unknown>;

export class PatchError extends Error {
  override readonly name = "PatchError";
}

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The reference tokens of a JSON Pointer ("" is the whole document). */
function tokens(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/"))
    throw new PatchError(`path ${JSON.stringify(pointer)} is no JSON Pointer`);
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function child(container: unknown, token: string, path: string): unknown {
  if (Array.isArray(container)) {
    const i = index(container, token, path, false);
    return container[i];
  }
  if (isObject(container) && Object.hasOwn(container, token)) return container[token];
  throw new PatchError(`path ${JSON.stringify(path)} does not exist`);
}

function index(array: unknown[], token: string, path: string, adding: boolean): number {
  if (adding && token === "-") return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`bad array index in ${path}`);
  const i = Number(token);
  if (i > array.length || (!adding && i === array.length)) {
    throw new PatchError(`array index out of range in ${path}`);
  }
  return i;
}

function setMember(obj: Json, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** The container of the last token and that token; the root has none. */
function parentOf(doc: unknown, path: string): { parent: unknown; last: string } {
  const ts = tokens(path);
  const last = ts.pop();
  if (last === undefined) throw new PatchError("the root has no parent");
  let parent = doc;
  for (const t of ts) parent = child(parent, t, path);
  return { parent, last };
}

function get(doc: unknown, path: string): unknown {
  let at = doc;
  for (const t of tokens(path)) at = child(at, t, path);
  return at;
}

function add(doc: unknown, path: string, value: unknown): unknown {
  if (path === "") return value;
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(index(parent, last, path, true), 0, value);
  else if (isObject(parent)) setMember(parent, last, value);
  else throw new PatchError(`the parent of ${path} is no object or array`);
  return doc;
}

function remove(doc: unknown, path: string): unknown {
  const { parent, last } = parentOf(doc, path);
  child(parent, last, path);
  if (Array.isArray(parent)) parent.splice(index(parent, last, path, false), 1);
  else Reflect.deleteProperty(parent as Json, last);
  return doc;
}

/** `doc` after `ops`; `doc` itself is not changed. Throws PatchError where kube would fail. */
export function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new PatchError("a JSON Patch is an array of operations");
  let out = structuredClone(doc);
  for (const op of ops as unknown[]) {
    if (!isObject(op) || typeof op["path"] !== "string") {
      throw new PatchError(`operation ${JSON.stringify(op)} has no path`);
    }
    const path = op["path"];
    const from = typeof op["from"] === "string" ? op["from"] : undefined;
    const value = structuredClone(op["value"]);
    switch (op["op"]) {
      case "add":
        out = add(out, path, value);
        break;
      case "remove":
        out = remove(out, path);
        break;
      case "replace":
        get(out, path);
        out = path === "" ? value : add(remove(out, path), path, value);
        break;
      case "test":
        if (JSON.stringify(get(out, path)) !== JSON.stringify(op["value"])) {
          throw new PatchError(`test failed at ${path}`);
        }
        break;
      case "move":
      case "copy": {
        if (from === undefined) throw new PatchError(`${String(op["op"])} without from`);
        const moved = structuredClone(get(out, from));
        if (op["op"] === "move") out = remove(out, from);
        out = add(out, path, moved);
        break;
      }
      default:
        throw new PatchError(`unknown operation ${JSON.stringify(op["op"])}`);
    }
  }
  return out;
}
