// A small route table: `METHOD /path/:param` patterns tried in order; the first match answers.

import type { Reply } from "./objects.js";

export type RouteHandler<C> = (ctx: C, params: Record<string, string>) => Reply | Promise<Reply>;

interface Route<C> {
  method: string;
  segments: string[];
  handle: RouteHandler<C>;
}

export class Router<C> {
  private readonly routes: Route<C>[] = [];

  add(method: string, pattern: string, handle: RouteHandler<C>): this {
    this.routes.push({ method, segments: split(pattern), handle });
    return this;
  }

  /** The handler and its parameters for a request, or null when no route matches. */
  match(
    method: string,
    pathname: string,
  ): { handle: RouteHandler<C>; params: Record<string, string> } | null {
    const parts = split(pathname);
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const params = matchSegments(route.segments, parts);
      if (params) return { handle: route.handle, params };
    }
    return null;
  }
}

function split(path: string): string[] {
  return path.split("/").filter((p) => p !== "");
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params = new Map<string, string>();
  for (const [i, seg] of pattern.entries()) {
    const part = parts[i]!;
    if (seg.startsWith(":")) params.set(seg.slice(1), part);
    else if (seg !== part) return null;
  }
  return Object.fromEntries(params);
}
