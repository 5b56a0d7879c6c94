import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, it } from "mocha";
import {
  base36EncodeBytes,
  convertLabelKeyWithPrefix,
  hostName,
  hostNameCluster,
  hostNameShort,
  mapNamespaceToHost,
  mapNamespaceToVirtual,
  safeConcatName,
  virtualToHostDNS,
} from "../../../webhook/src/patches/host-names.js";

const bytes = (s: string): number => Buffer.byteLength(s, "utf8");
const sha256Hex = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex");

/**
 * How Go's encoding/json writes a byte string: each valid UTF-8 sequence as its character, each
 * byte that does not start one as U+FFFD (utf8.DecodeRuneInString's RuneError of width 1).
 */
function goJsonString(bytes: Uint8Array): string {
  const strict = new TextDecoder("utf-8", { fatal: true });
  let out = "";
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i]!;
    const width = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
    let char: string | null = null;
    if (width > 0 && i + width <= bytes.length) {
      try {
        char = strict.decode(bytes.subarray(i, i + width));
      } catch {
        char = null;
      }
    }
    out += char ?? "\uFFFD";
    i += char === null ? 1 : width;
  }
  return out;
}

describe("patches/host-names", () => {
  describe("worked examples (docs/reference.md#host-name-examples)", () => {
    // [name, namespace, vc, HostName, HostNameShort]
    const table: [string, string, string, string, string | null][] = [
      [
        "my-secret",
        "default",
        "my-vcluster",
        "my-secret-x-default-x-my-vcluster",
        "v5ri45ovgqam9c",
      ],
      ["test-endpoints", "test", "suffix", "test-endpoints-x-test-x-suffix", "v1mi4z771xlawq"],
      [
        "nginx-from-other-namespace",
        "some-other-namespace",
        "default-namespace-sync",
        "nginx-from-other-namespace-x-some-other-namespace-x--4b96e8f948",
        "v1vtna31lswje8",
      ],
      [
        "legacy-database-primary-endpoint-for-reporting-east.internal",
        "default",
        "my-vcluster",
        "legacy-database-primary-endpoint-for-reporting-east-aa187a42eb",
        null,
      ],
      ["ep-14", "default", "my-vcluster", "ep-14-x-default-x-my-vcluster", "v0qlj0x03ss950"],
      ["my-claim", "default", "my-vcluster", "my-claim-x-default-x-my-vcluster", "v7s8pzokcnwdcy"],
      ["nginx", "default", "vcluster", "nginx-x-default-x-vcluster", "v1curhi49jlk2e"],
    ];
    for (const [name, ns, vc, long, short] of table) {
      it(`${name}/${ns}/${vc}`, () => {
        assert.equal(hostName(name, ns, vc), long);
        if (short !== null) assert.equal(hostNameShort(name, ns, vc), short);
      });
    }

    it("#4 is 62 characters because '.-' collapsed", () => {
      const name = hostName(
        "legacy-database-primary-endpoint-for-reporting-east.internal",
        "default",
        "my-vcluster",
      );
      assert.equal(name.length, 62);
    });

    it("#5 keeps the leading-zero-byte quirk (a naive encoding gives vqlj0x03ss950h)", () => {
      const digest = createHash("sha256").update("ep-14-x-default-x-my-vcluster").digest();
      assert.equal(digest[0], 0);
      const naive = `v${BigInt(`0x${digest.toString("hex")}`)
        .toString(36)
        .slice(0, 13)}`;
      assert.equal(naive, "vqlj0x03ss950h");
      assert.notEqual(hostNameShort("ep-14", "default", "my-vcluster"), naive);
    });

    it("#8 HostNameCluster", () => {
      assert.equal(
        hostNameCluster("fast", "vcluster-my-vcluster", "my-vcluster"),
        "vcluster-fast-x-vcluster-my-vcluster-x-my-vcluster",
      );
    });

    it("empty names stay empty", () => {
      assert.equal(hostName("", "default", "vc"), "");
      assert.equal(hostNameShort("", "default", "vc"), "");
      assert.equal(hostNameCluster("", "ns", "vc"), "");
    });
  });

  describe("safeConcatName by hand", () => {
    it("keeps exactly 63 bytes and hashes 64", () => {
      const p63 = "a".repeat(63);
      assert.equal(safeConcatName(p63), p63);
      const p64 = "a".repeat(64);
      assert.equal(safeConcatName(p64), `${"a".repeat(52)}-${sha256Hex(p64).slice(0, 10)}`);
    });

    it("hashes the joined string, not the parts", () => {
      const parts = ["b".repeat(40), "c".repeat(40)];
      const joined = parts.join("-");
      assert.equal(
        safeConcatName(...parts),
        `${joined.slice(0, 52)}-${sha256Hex(joined).slice(0, 10)}`,
      );
    });

    it("leaves '--' when the cut ends in '-'", () => {
      const parts = ["d".repeat(51), "e".repeat(20)];
      const joined = parts.join("-");
      assert.equal(
        safeConcatName(...parts),
        `${"d".repeat(51)}--${sha256Hex(joined).slice(0, 10)}`,
      );
    });

    it("counts bytes, not characters", () => {
      // 32 two-byte characters are 64 bytes: hashed although only 32 characters.
      const wide = "é".repeat(32);
      const out = safeConcatName(wide);
      assert.notEqual(out, wide);
      assert.equal(out, `${"é".repeat(26)}-${sha256Hex(wide).slice(0, 10)}`);
    });

    it("a character the cut splits: one U+FFFD per byte kept, as Go's JSON carries it", () => {
      // vCluster v0.34.0 wrote "p" + 25 "é" + U+FFFD + "-6c77562b42" for this Pod targetRef
      // (test/cluster/vcluster-translation.test.ts): byte 52 is the first of an "é".
      const pod = `p${"é".repeat(30)}`;
      assert.equal(hostName(pod, "ns-a", "vc"), `p${"é".repeat(25)}\uFFFD-6c77562b42`);
      // Two bytes of a three-byte "€" are kept: two U+FFFD, not one.
      const euro = `${"a".repeat(50)}${"€".repeat(5)}`;
      assert.equal(
        safeConcatName(euro),
        `${"a".repeat(50)}\uFFFD\uFFFD-${sha256Hex(euro).slice(0, 10)}`,
      );
      // Three bytes of a four-byte emoji: three.
      const emoji = `${"a".repeat(49)}${"😀".repeat(5)}`;
      assert.equal(
        safeConcatName(emoji),
        `${"a".repeat(49)}\uFFFD\uFFFD\uFFFD-${sha256Hex(emoji).slice(0, 10)}`,
      );
    });

    it("property: Go's byte slice, every invalid byte written as U+FFFD (encoding/json)", () => {
      fc.assert(
        fc.property(
          fc.array(fc.string({ unit: "binary", maxLength: 80 }), { maxLength: 6 }),
          (parts) => {
            const joined = parts.join("-");
            const raw = Buffer.from(joined, "utf8");
            const expected =
              raw.length <= 63
                ? joined
                : `${goJsonString(raw.subarray(0, 52))}-${sha256Hex(joined).slice(0, 10)}`
                    .split(".-")
                    .join("-");
            assert.equal(safeConcatName(...parts), expected);
          },
        ),
      );
    });

    it("property: ASCII input: at most 63 bytes", () => {
      fc.assert(
        fc.property(
          fc.array(fc.string({ unit: "grapheme-ascii", maxLength: 80 }), { maxLength: 6 }),
          (parts) => {
            assert.ok(bytes(safeConcatName(...parts)) <= 63);
          },
        ),
      );
    });

    it("property: short input is returned joined and is idempotent", () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 63 }), (s) => {
          fc.pre(bytes(s) <= 63);
          assert.equal(safeConcatName(s), s);
          assert.equal(safeConcatName(safeConcatName(s)), safeConcatName(s));
        }),
      );
    });
  });

  describe("base36EncodeBytes", () => {
    it("encodes big-endian with one extra '0' per leading zero byte", () => {
      assert.equal(base36EncodeBytes(new Uint8Array([])), "");
      assert.equal(base36EncodeBytes(new Uint8Array([0])), "0");
      assert.equal(base36EncodeBytes(new Uint8Array([0, 0])), "00");
      assert.equal(base36EncodeBytes(new Uint8Array([35])), "z");
      assert.equal(base36EncodeBytes(new Uint8Array([36])), "10");
      // 0x0100 = 256 = 7*36 + 4
      assert.equal(base36EncodeBytes(new Uint8Array([1, 0])), "74");
      assert.equal(base36EncodeBytes(new Uint8Array([0, 1, 0])), "074");
    });

    it("property: equals BigInt base 36 plus the zero-byte prefix", () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 40 }), (buf) => {
          const zeros = buf.findIndex((b) => b !== 0);
          const leading = zeros < 0 ? buf.length : zeros;
          const hex = Buffer.from(buf).toString("hex");
          const big = hex === "" ? 0n : BigInt(`0x${hex}`);
          const tail = big === 0n ? "" : big.toString(36);
          assert.equal(base36EncodeBytes(buf), "0".repeat(leading) + tail);
        }),
      );
    });
  });

  it("property: hostNameShort always matches /^v[0-9a-z]{13}$/", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), fc.string(), (n, ns, vc) => {
        assert.match(hostNameShort(n, ns, vc), /^v[0-9a-z]{13}$/);
      }),
    );
  });

  describe("label keys (docs/reference.md#label-keys)", () => {
    const table: [string, string, string, string][] = [
      ["vcluster.loft.sh/label", "release", "suffix", "vcluster.loft.sh/label-suffix-x-a4d451ec23"],
      [
        "vcluster.loft.sh/label",
        "vcluster.loft.sh/namespace",
        "suffix",
        "vcluster.loft.sh/label-suffix-x-101dcd4e86",
      ],
      [
        "vcluster.loft.sh/label",
        "vcluster.loft.sh/managed-by",
        "suffix",
        "vcluster.loft.sh/label-suffix-x-e5f1b28ab2",
      ],
      [
        "vcluster.loft.sh/label",
        "vcluster.loft.sh/controlled-by",
        "suffix",
        "vcluster.loft.sh/label-suffix-x-2080cec00f",
      ],
      [
        "vcluster.loft.sh/label",
        "release",
        "my-vcluster",
        "vcluster.loft.sh/label-my-vcluster-x-a4d451ec23",
      ],
      [
        "vcluster.loft.sh/label",
        "release",
        "my-very-long-virtual-cluster-name-prod",
        "vcluster.loft.sh/label-my-very-long-virtual-cluster--835d970f9e",
      ],
      [
        "vcluster.loft.sh/ns-label",
        "kubernetes.io/metadata.name",
        "my-vcluster",
        "vcluster.loft.sh/ns-label-my-vcluster-x-cf1227b7b2",
      ],
    ];
    for (const [prefix, key, vc, expected] of table) {
      it(`${key} in ${vc}`, () => {
        assert.equal(convertLabelKeyWithPrefix(prefix, key, vc), expected);
      });
    }

    it("by hand: prefix-vc-x-sha256hex(key)[0:10]", () => {
      assert.equal(
        convertLabelKeyWithPrefix("p", "k", "vc"),
        `p-vc-x-${sha256Hex("k").slice(0, 10)}`,
      );
    });
  });

  describe("virtualToHostDNS (docs/reference.md#virtual-to-host-dns)", () => {
    const vc = { name: "vcluster", namespace: "vcluster-ns" };
    it("rewrites name.namespace.svc with and without a domain", () => {
      assert.equal(
        virtualToHostDNS("nginx.default.svc.cluster.local", vc),
        "nginx-x-default-x-vcluster.vcluster-ns.svc.cluster.local",
      );
      assert.equal(
        virtualToHostDNS("nginx.default.svc", vc),
        "nginx-x-default-x-vcluster.vcluster-ns.svc",
      );
    });
    it("hashes long service names like the Services mapper", () => {
      const name = "a".repeat(50);
      assert.equal(
        virtualToHostDNS(`${name}.team.svc`, vc),
        `${hostName(name, "team", "vcluster")}.vcluster-ns.svc`,
      );
    });
    it("returns anything else unchanged", () => {
      for (const s of [
        "nginx",
        "nginx.default",
        "nginx.default.svcx",
        "a.b.c.svc",
        "",
        "x..svc",
        "nginx.default.svc.",
      ]) {
        assert.equal(virtualToHostDNS(s, vc), s);
      }
    });
  });

  describe("namespace mappings (byName)", () => {
    const mappings = { "team-a": "host-a", "team-b-*": "h-team-b-*", "*-dev": "dev-*" };
    it("maps exact names both ways", () => {
      assert.equal(mapNamespaceToHost("team-a", mappings), "host-a");
      assert.equal(mapNamespaceToVirtual("host-a", mappings), "team-a");
    });
    it("maps one wildcard both ways", () => {
      assert.equal(mapNamespaceToHost("team-b-x", mappings), "h-team-b-x");
      assert.equal(mapNamespaceToVirtual("h-team-b-x", mappings), "team-b-x");
      assert.equal(mapNamespaceToHost("web-dev", mappings), "dev-web");
      assert.equal(mapNamespaceToVirtual("dev-web", mappings), "web-dev");
    });
    it("an exact key wins over a wildcard", () => {
      assert.equal(
        mapNamespaceToHost("team-b-x", { "team-b-*": "w-*", "team-b-x": "exact" }),
        "exact",
      );
    });
    it("returns null without a match", () => {
      assert.equal(mapNamespaceToHost("other", mappings), null);
      assert.equal(mapNamespaceToHost("team-b-", mappings), null); // `*` matches at least one character
      assert.equal(mapNamespaceToVirtual("team-a", mappings), null);
      assert.equal(mapNamespaceToHost("team-a", undefined), null);
      assert.equal(mapNamespaceToHost("team-a", {}), null);
    });
    it("ignores malformed wildcard entries", () => {
      assert.equal(mapNamespaceToHost("a-x", { "a-*": "fixed" }), null);
      assert.equal(mapNamespaceToHost("a-x-y", { "a-*-*": "b-*-*" }), null);
    });
    it("is not fooled by __proto__", () => {
      const tricky = JSON.parse('{"__proto__": "host-proto"}') as Record<string, string>;
      assert.equal(mapNamespaceToHost("__proto__", tricky), "host-proto");
      assert.equal(mapNamespaceToHost("constructor", tricky), null);
    });
  });
});
