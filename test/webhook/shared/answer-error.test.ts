// The one decoder of error answers (plugin and server): a metav1.Status keeps its code, reason,
// message and details (well-typed fields only); any other body gets client-go's generic reason and
// message. statusError keeps what kubectl prints; answerError knows a reason-less answer by its code.

import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { answerError, statusError } from "../../../webhook/src/shared/answer-error.js";

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

  it("gives client-go's message for a 404 that is no Status, and NotAcceptable for a 406", () => {
    for (const decode of [
      statusError,
      (code: number, body: unknown) => answerError({ status: code, body }),
    ]) {
      const missing = decode(404, "404 page not found");
      assert.equal(missing.reason, "NotFound");
      assert.equal(missing.message, "the server could not find the requested resource");
      assert.equal(decode(406, "").reason, "NotAcceptable");
      assert.equal(decode(599, "").reason, "InternalError");
      assert.equal(
        decode(599, "").message,
        'an error on the server ("unknown") has prevented the request from succeeding',
      );
    }
  });

  it("statusError keeps a Status's reason as sent, even an empty one, as kubectl prints it", () => {
    const body = (reason: unknown, code: number) => ({
      kind: "Status",
      message: "m",
      reason,
      code,
    });
    assert.equal(statusError(403, body("", 403)).reason, "");
    assert.equal(statusError(403, body("NotMine", 403)).reason, "NotMine");
    // No reason string at all: the code's, or none for a code client-go has no reason for.
    assert.equal(statusError(409, body(undefined, 409)).reason, "Conflict");
    assert.equal(statusError(418, body(7, 418)).reason, "");
    assert.deepEqual(statusError(404, status({ name: "gone" })).details, { name: "gone" });
  });

  it("answerError knows an answer without a reason by its code, as apierrors.IsNotFound does", () => {
    const body = (reason: unknown) => ({
      kind: "Status",
      message: "m",
      reason,
      details: { name: "x" },
    });
    const empty = answerError({ status: 409, body: body("") });
    assert.equal(empty.reason, "Conflict");
    assert.equal(empty.message, "m");
    assert.deepEqual(empty.details, { name: "x" });
    assert.equal(answerError({ status: 418, body: body(undefined) }).reason, "InternalError");
    assert.equal(answerError({ status: 409, body: body("AlreadyExists") }).reason, "AlreadyExists");
  });
});
