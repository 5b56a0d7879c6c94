// A bare watch client for the emulator's self-tests: opens `?watch=true` and collects the events.

import assert from "node:assert/strict";
import https from "node:https";
import type { TestApiServer } from "./index.js";

export interface WatchEvent {
  type: string;
  object: { metadata?: { name?: string; resourceVersion?: string }; [k: string]: unknown };
}

export interface Stream {
  status: number;
  events: WatchEvent[];
  ended: boolean;
  close(): void;
}

export function openWatch(server: TestApiServer, path: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const headers = { Authorization: `Bearer ${server.token}` };
    const req = https.get(new URL(path, server.url), { ca: server.caPem, headers }, (res) => {
      const stream: Stream = {
        status: res.statusCode ?? 0,
        events: [],
        ended: false,
        close: () => req.destroy(),
      };
      let pending = "";
      res.on("data", (chunk: Buffer) => {
        const lines = (pending + chunk.toString()).split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) if (line) stream.events.push(JSON.parse(line) as WatchEvent);
      });
      res.on("end", () => (stream.ended = true));
      res.on("error", () => undefined);
      resolve(stream);
    });
    req.on("error", reject);
  });
}

export async function until(check: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
