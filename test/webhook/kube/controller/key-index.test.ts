// KeyIndex: a watched object's change queues the queue key it stood for and the one it stands for.

import assert from "node:assert/strict";
import { KeyIndex } from "../../../../webhook/src/kube/controller/key-index.js";

describe("KeyIndex", () => {
  const start = () => {
    const queued: string[] = [];
    return { queued, index: new KeyIndex((k) => queued.push(k)) };
  };

  it("queues the key an object stands for, and keeps it for the object's deletion", () => {
    const { queued, index } = start();
    index.set("host/a-x-ns-x-vc", "ns/a");
    index.set("host/a-x-ns-x-vc", undefined); // deleted
    assert.deepEqual(queued, ["ns/a", "ns/a"]);
    assert.deepEqual([...index.values()], []);
  });

  it("queues both keys when an object comes to stand for another, once each", () => {
    const { queued, index } = start();
    index.set("h1", "ns/a");
    index.set("h1", "ns/b");
    index.set("h1", "ns/b");
    assert.deepEqual(queued, ["ns/a", "ns/a", "ns/b", "ns/b"]);
    assert.deepEqual([...index.values()], ["ns/b"]);
  });

  it("an object that stands for nothing queues nothing, and forgets what it stood for", () => {
    const { queued, index } = start();
    index.set("h1", undefined);
    assert.deepEqual(queued, []);
    index.set("h2", "ns/a");
    index.set("h2", undefined);
    index.set("h2", undefined);
    assert.deepEqual(queued, ["ns/a", "ns/a"]);
  });
});
