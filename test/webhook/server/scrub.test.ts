import assert from "node:assert/strict";
import fc from "fast-check";
import { newInvalid, type Status } from "../../../webhook/src/shared/status.js";
import { formatValue, invalid } from "../../../webhook/src/shared/field-errors.js";
import { allow, deny } from "../../../webhook/src/admission/respond.js";
import { redactCredentials, REDACTED } from "../../../webhook/src/server/redact.js";
import {
  MAX_CAUSES,
  MAX_MESSAGE_CHARS,
  scrubReview,
  scrubStatus,
  scrubText,
  SecretValues,
} from "../../../webhook/src/server/scrub.js";

/** Planted values: what a leak would show. Some look random; some do not look like anything. */
const KEY = "4q6bYp0kVvQy8t1Jm2cZrW3xN5sD7fGhK9LqA0eUoIw";
const PLAIN = "correct horse battery staple";
const QUOTED = 'pass"word\\with\nescapes-long';

const body = {
  request: {
    object: {
      spec: {
        key: KEY,
        identity: { connectorData: PLAIN },
        oidcLogin: { IdToken: QUOTED, accessToken: ["list-item-secret-value"] },
      },
    },
    userInfo: { extra: { token: ["x"] } },
  },
};

describe("scrubbing answers", () => {
  it("finds the values of secret fields at any depth, in any case, as strings and in lists", () => {
    const secrets = SecretValues.of(body);
    for (const s of [KEY, PLAIN, QUOTED, "list-item-secret-value"]) {
      assert.equal(secrets.redact(`a ${s} b`), `a ${REDACTED} b`, s);
    }
    assert.equal(secrets.redact("a x b"), "a x b", "values too short to be secrets are left");
  });

  it("hides a secret however a message quotes it: raw, JSON-quoted, inside an object, truncated", () => {
    const secrets = SecretValues.of(body);
    const messages = [
      `spec.type: Unsupported value: ${formatValue(QUOTED)}`,
      `got ${JSON.stringify({ nested: { key: KEY, other: PLAIN } })}`,
      `spec.scope: Invalid value: ${formatValue({ pad: "p".repeat(220), value: KEY })}`,
      `two: ${KEY}${KEY}`,
    ];
    for (const m of messages) {
      const out = scrubText(m, secrets);
      for (const s of [KEY, PLAIN, QUOTED, JSON.stringify(QUOTED).slice(1, -1)]) {
        assert.ok(!out.includes(s.slice(0, 12)), `${out} still has ${s}`);
      }
      assert.ok(out.includes(REDACTED), out);
    }
    // The truncated case is not hollow: the message carries the key's start, not all of it.
    assert.ok(messages[2]!.includes(KEY.slice(0, 12)) && !messages[2]!.includes(KEY));
  });

  it("hides any planted secret of 12 or more characters wherever it sits in a message", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 12, maxLength: 80 }),
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 40 }),
        (secret, before, after) => {
          const secrets = SecretValues.of({ spec: { key: secret } });
          const out = scrubText(`${before}${secret}${after}`, secrets);
          assert.ok(!out.includes(secret), JSON.stringify({ out, secret }));
          const quoted = scrubText(`${before}${JSON.stringify(secret)}${after}`, secrets);
          assert.ok(!quoted.includes(JSON.stringify(secret).slice(1, -1)), quoted);
        },
      ),
    );
  });

  it("hides what looks like a credential, whatever field it came from", () => {
    const jwt =
      "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJlLXBhcnQ1";
    const shapes = [
      `Bearer abc.def`,
      jwt,
      KEY,
      "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
      "AKIAIOSFODNN7EXAMPLE/wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----",
    ];
    for (const s of shapes) {
      const out = redactCredentials(`metadata.labels[a]: Invalid value: "${s}": bad`);
      assert.ok(out.includes(REDACTED), out);
      assert.ok(!out.includes(s.slice(6, 18)), out);
    }
  });

  it("leaves Kubernetes names, UIDs, paths, kinds and vgate's own messages as they are", () => {
    const plain = [
      'OwnedAccessKey.management.loft.sh "ci-pipeline-2024-production-east" is invalid: metadata.ownerReferences[0].uid: Required value',
      "705ab4f5-6393-11e8-b7cc-42010a800002",
      "system:serviceaccount:vgate-system:vgate-controller-manager",
      "expected kind AdmissionReview in apiVersion admission.k8s.io/v1; configure the webhook with admissionReviewVersions",
      "/apis/management.loft.sh/v1/ownedaccesskeys/my-key-name-number-12",
      'spec.scope.virtualClusters[3].virtualCluster: Invalid value: "vcluster-east-1"',
      "request body is not valid JSON: expected ',' or '}' at line 1, column 61 (byte 60)",
    ];
    for (const text of plain) assert.equal(scrubText(text), text);
  });

  it("bounds the message and the causes", () => {
    const errors = Array.from({ length: 5000 }, (_, i) =>
      invalid(`metadata.labels[k${i}]`, "v".repeat(200), "bad"),
    );
    const status = scrubStatus(newInvalid({ group: "g", kind: "K" }, "n", errors).toStatus());
    assert.ok(status.message.length < MAX_MESSAGE_CHARS + 100, String(status.message.length));
    assert.match(status.message, /\.\.\. \(\d+ more characters\)$/);
    assert.equal(status.details?.causes?.length, MAX_CAUSES);
  });

  it("scrubs the status, causes and warnings of a review, and leaves an answer without text alone", () => {
    const secrets = () => SecretValues.of(body);
    const ok = allow("uid-1");
    assert.equal(scrubReview(ok, secrets), ok);
    const error = newInvalid({ group: "g", kind: "K" }, KEY, [invalid("spec.x", PLAIN, "no")]);
    const denied = scrubReview(deny("uid-1", error, [`careful with ${KEY}`]), secrets);
    const text = JSON.stringify(denied);
    assert.ok(!text.includes(KEY) && !text.includes(PLAIN), text);
    const status = denied.response.status as Status;
    assert.equal(status.details?.name, REDACTED);
    assert.equal(status.details?.causes?.[0]?.message, `Invalid value: "${REDACTED}": no`);
    assert.deepEqual(denied.response.warnings, [`careful with ${REDACTED}`]);
    assert.ok(JSON.stringify(error.toStatus()).includes(KEY), "the original is not changed");
  });
});
