// JSON as a tree that can say what JSON.stringify cannot: duplicate keys, `__proto__` as an own
// key, numbers out of every range, nesting deeper than any recursive printer could write. The
// fuzzer parses valid bodies into this tree, mutates it at chosen places and prints it.

/** Text put into the output as it is (a number like 1e400, deep nesting, broken syntax). */
export class Raw {
  constructor(readonly text: string) {}
}

/** An object as an ordered list of entries: keys may repeat. */
export class Obj {
  constructor(readonly entries: [string, Node][]) {}
}

export type Node = null | boolean | number | string | Raw | Obj | Node[];

export type Path = (string | number)[];

export function fromJson(value: unknown): Node {
  if (Array.isArray(value)) return value.map(fromJson);
  if (value !== null && typeof value === "object") {
    return new Obj(Object.entries(value).map(([k, v]) => [k, fromJson(v)]));
  }
  return value as Node;
}

/** The tree as JSON text (or as the broken text a Raw makes it). */
export function toText(node: Node): string {
  if (node instanceof Raw) return node.text;
  if (node instanceof Obj) {
    return `{${node.entries.map(([k, v]) => `${JSON.stringify(k)}:${toText(v)}`).join(",")}}`;
  }
  if (Array.isArray(node)) return `[${node.map(toText).join(",")}]`;
  return JSON.stringify(node);
}

/** Every place in the tree, the root first (at most `limit`). */
export function paths(node: Node, limit = 4000): Path[] {
  const out: Path[] = [];
  const walk = (n: Node, at: Path) => {
    if (out.length >= limit) return;
    out.push(at);
    if (n instanceof Obj) n.entries.forEach(([, v], i) => walk(v, [...at, i]));
    else if (Array.isArray(n)) n.forEach((v, i) => walk(v, [...at, i]));
  };
  walk(node, []);
  return out;
}

/** The node at `path` (object entries are addressed by index). */
export function nodeAt(root: Node, path: Path): Node {
  let n = root;
  for (const step of path) {
    if (n instanceof Obj) n = n.entries[step as number]![1];
    else n = (n as Node[])[step as number]!;
  }
  return n;
}

/** The container holding `path` and the index in it; undefined for the root. */
export function parentOf(
  root: Node,
  path: Path,
): { parent: Obj | Node[]; index: number } | undefined {
  if (path.length === 0) return undefined;
  const parent = nodeAt(root, path.slice(0, -1)) as Obj | Node[];
  return { parent, index: path.at(-1) as number };
}

/** Replaces the node at `path`; at the root, returns the replacement. */
export function replaceAt(root: Node, path: Path, next: Node): Node {
  const at = parentOf(root, path);
  if (!at) return next;
  if (at.parent instanceof Obj) at.parent.entries[at.index]![1] = next;
  else at.parent[at.index] = next;
  return root;
}
