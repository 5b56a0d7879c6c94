// Many OwnedAccessKeys written straight into the node rig's etcd, for measuring vgate with a large
// key set (test/cluster/resources.test.ts). Through kube-apiserver each create costs two calls of
// vgate's admission webhooks: here about 40 creates a second, so 100,000 keys would take most of
// an hour that measures nothing about memory. Each key is a copy of one key created through
// kube-apiserver and vgate's webhooks, as kube-apiserver stored it (read back from etcd: defaults,
// managedFields and all), with its own name, uid and key hash, so vgate's watch delivers exactly
// what it would have delivered for keys created one by one.
//
// etcd listens on 127.0.0.1 inside the rig's network namespace, so the writes run there:
//
//   ip netns exec <ns> node etcd-keys.js <etcd URL> <registry prefix> <template key> <keys file>
//
// The keys file has one "<name> <spec.key>" line per key (hashes only: no token is on disk). The
// writes go through etcd's JSON gateway (/v3/kv/txn), 100 puts a transaction (etcd's --max-txn-ops
// is 128), a few transactions at a time. Prints one JSON line: {keys, seconds}.

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { performance } from "node:perf_hooks";

const PUTS_PER_TXN = 100;
const TXNS_IN_FLIGHT = 4;

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

/** Reads key `key` from etcd (undefined when absent). */
export async function etcdGet(url: string, key: string): Promise<string | undefined> {
  const out = JSON.parse(await post(url, "/v3/kv/range", { key: b64(key) })) as {
    kvs?: { value: string }[];
  };
  const v = out.kvs?.[0]?.value;
  return v === undefined ? undefined : Buffer.from(v, "base64").toString("utf8");
}

function post(url: string, path: string, body: unknown): Promise<string> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method: "POST", timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if (res.statusCode !== 200) reject(new Error(`etcd ${path}: ${res.statusCode} ${text}`));
        else resolve(text);
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`etcd ${path} timed out`)));
    req.on("error", reject);
    req.end(data);
  });
}

interface StoredKey {
  metadata: {
    name: string;
    uid: string;
    creationTimestamp: string;
    managedFields?: { time?: string }[];
  };
  spec: { key: string; displayName?: string };
}

async function main(): Promise<void> {
  const [url, prefix, templateName, keysFile] = process.argv.slice(2);
  if (!url || !prefix || !templateName || !keysFile) {
    throw new Error("usage: etcd-keys <etcd URL> <registry prefix> <template key> <keys file>");
  }
  const text = await etcdGet(url, `${prefix}/${templateName}`);
  if (text === undefined) throw new Error(`no ${prefix}/${templateName} in etcd`);
  const template = JSON.parse(text) as StoredKey;
  const keys = readFileSync(keysFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" ") as [string, string]);
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let from = next; from < keys.length; from = next) {
      next += PUTS_PER_TXN;
      const success = keys.slice(from, from + PUTS_PER_TXN).map(([name, hash]) => {
        const obj: StoredKey = {
          ...template,
          metadata: {
            ...template.metadata,
            name,
            uid: randomUUID(),
            creationTimestamp: now,
            ...(template.metadata.managedFields
              ? { managedFields: template.metadata.managedFields.map((f) => ({ ...f, time: now })) }
              : {}),
          },
          spec: {
            ...template.spec,
            key: hash,
            ...(template.spec.displayName === templateName ? { displayName: name } : {}),
          },
        };
        return { requestPut: { key: b64(`${prefix}/${name}`), value: b64(JSON.stringify(obj)) } };
      });
      // Only where no key of that name exists yet: a create, never an overwrite.
      const compare = success.map((s) => ({
        key: s.requestPut.key,
        target: "CREATE",
        result: "EQUAL",
        create_revision: "0",
      }));
      const out = JSON.parse(await post(url, "/v3/kv/txn", { compare, success })) as {
        succeeded?: boolean;
      };
      if (out.succeeded !== true) throw new Error(`etcd: a key of ${keys[from]![0]}… exists`);
    }
  };
  await Promise.all(Array.from({ length: TXNS_IN_FLIGHT }, worker));
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`${JSON.stringify({ keys: keys.length, seconds })}\n`);
}

if (process.argv[1]?.endsWith("etcd-keys.js")) {
  main().catch((err: unknown) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
