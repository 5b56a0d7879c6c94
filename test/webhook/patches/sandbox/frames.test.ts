// Frames between the server and a sandbox child: reassembly from any split, and a child that
// sends malformed or oversized frames, or does not answer, is ended without harm to the server.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, it } from "mocha";
import {
  SandboxProcess,
  type ExitInfo,
} from "../../../../webhook/src/patches/sandbox/child-process.js";
import {
  FrameDecoder,
  FrameError,
  writeFrame,
} from "../../../../webhook/src/patches/sandbox/frames.js";

const FAKE_CHILD = join(dirname(fileURLToPath(import.meta.url)), "fixtures/fake-child.js");

/** The bytes writeFrame writes for `messages`. */
function encode(messages: unknown[]): Buffer {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on("data", (c: Buffer) => chunks.push(c));
  for (const m of messages) writeFrame(out, m);
  return Buffer.concat(chunks);
}

function header(length: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(length, 0);
  return b;
}

describe("patches/sandbox/frames", () => {
  it("reassembles any messages from any split of their bytes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (messages, cuts) => {
          const bytes = encode(messages);
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort(
            (a, b) => a - b,
          );
          const decoder = new FrameDecoder(1 << 20);
          const out: unknown[] = [];
          let from = 0;
          for (const at of [...points, bytes.length]) {
            out.push(...decoder.push(bytes.subarray(from, at)));
            from = at;
          }
          // V8's format keeps -0, which JSON cannot tell from 0.
          assert.deepEqual(JSON.parse(JSON.stringify(out)), JSON.parse(JSON.stringify(messages)));
        },
      ),
    );
  });

  it("refuses a frame over the limit from its header, before its body arrives", () => {
    const decoder = new FrameDecoder(1024);
    assert.throws(
      () => decoder.push(header(2 ** 31)),
      /a frame of 2147483648 bytes is over the limit \(1024\)/,
    );
  });

  it("refuses a body that is not V8's format", () => {
    const decoder = new FrameDecoder(1024);
    assert.throws(() => decoder.push(Buffer.concat([header(5), Buffer.from("junk!")])), FrameError);
  });

  describe("a child that breaks the protocol", function () {
    this.timeout(20_000);
    const limits = { heapMb: 32, semiSpaceMb: 1, stackKb: 1024 };

    function fake(
      mode: string,
      maxFrameBytes: number,
    ): { proc: SandboxProcess; exit: Promise<ExitInfo> } {
      let proc!: SandboxProcess;
      const exit = new Promise<ExitInfo>((resolve) => {
        proc = new SandboxProcess(
          limits,
          maxFrameBytes,
          { message: () => assert.fail("no message was expected"), exit: resolve },
          [FAKE_CHILD, mode],
        );
      });
      // Tests wait on it; a pool would while it has work.
      proc.ref();
      return { proc, exit };
    }

    for (const [mode, error] of [
      ["oversized", /a frame of 1073741824 bytes is over the limit \(1048576\)/],
      ["garbage", /a frame does not decode/],
    ] as const) {
      it(`is killed when it sends ${mode === "oversized" ? "an oversized frame" : "a frame that does not decode"}`, async () => {
        const info = await fake(mode, 1024 * 1024).exit;
        assert.equal(info.signal, "SIGKILL");
        assert.match(info.error?.message ?? "", error);
      });
    }

    it("is killed when its monitor answers a question nobody asked", async () => {
      const info = await fake("chatty", 1024).exit;
      assert.equal(info.signal, "SIGKILL");
      assert.match(info.error?.message ?? "", /an answer nobody asked for/);
    });

    it("is asked in vain when it does not answer: the question times out", async () => {
      const { proc, exit } = fake("mute", 1024);
      const start = performance.now();
      assert.equal(await proc.query(50), undefined);
      assert.ok(performance.now() - start < 2000);
      proc.kill();
      assert.equal((await exit).signal, "SIGKILL");
    });
  });
});
