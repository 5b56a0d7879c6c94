// answerError: a kube-apiserver error answer as a KubeError. A metav1.Status keeps its code, reason,
// message and details (well-typed fields only); any other body gets client-go's generic message.

import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { answerError } from "../../../webhook/src/shared/answer-error.js";

const status = (details: unknown) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  message: 'namespaces "gone" not found',
  reason: "NotFound",
  details,
  code: 404,
});

describe("shared/answer-error", () => {
  it("keeps a Status answer's code, reason, message and details", () => {
    const err = answerError({
      status: 404,
      body: status({ name: "gone", kind: "namespaces", causes: [{ reason: "X", field: "f" }] }),
    } as never);
    assert.equal(err.code, 404);
    assert.equal(err.reason, "NotFound");
    assert.equal(err.message, 'namespaces "gone" not found');
    assert.deepEqual(err.details, {
      name: "gone",
      kind: "namespaces",
      causes: [{ reason: "X", message: "", field: "f" }],
    });
  });

  it("keeps only well-typed details, and none when they are no object", () => {
    const odd = answerError({
      status: 404,
      body: status({
        name: 7,
        kind: "namespaces",
        retryAfterSeconds: "1",
        causes: [1, { message: 2 }],
      }),
    } as never);
    assert.deepEqual(odd.details, {
      kind: "namespaces",
      causes: [{ reason: "", message: "", field: "" }],
    });
    for (const details of [null, "namespaces", ["kind"], undefined]) {
      assert.equal(answerError({ status: 404, body: status(details) } as never).details, undefined);
    }
  });

  it("gives client-go's generic message for a body that is no Status", () => {
    const err = answerError({ status: 503, body: "upstream down" } as never);
    assert.equal(err.reason, "ServiceUnavailable");
    assert.equal(
      err.message,
      'an error on the server ("upstream down") has prevented the request from succeeding',
    );
    assert.equal(err.details, undefined);
  });
});
