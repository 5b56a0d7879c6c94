// Relative links between README.md, docs/*.md and manifests/README.md resolve: the file exists,
// and a #fragment into a markdown page names one of its headings (as GitHub makes their anchors)
// or an explicit <a id>.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { userDocs } from "../support/readme-blocks.js";

const PAGES = [...userDocs(), "manifests/README.md"];

/** The page's text outside fenced code blocks. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces made hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .replace(/<[^>]+>/g, "");
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a page defines: its headings' slugs (numbered when repeated) and <a id>s. */
export function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  const body = prose(text);
  for (const m of body.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = githubSlug(m[1]!);
    const n = seen.get(slug) ?? 0;
    found.add(n === 0 ? slug : `${slug}-${n}`);
    seen.set(slug, n + 1);
  }
  for (const m of body.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(m[1]!);
  return found;
}

/** Every inline link or image target of a page's prose that is not a URL. */
function relativeLinks(text: string): string[] {
  const targets: string[] = [];
  for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) targets.push(target);
  }
  return targets;
}

describe("docs: relative links resolve", () => {
  it("GitHub's anchors, as this test computes them", () => {
    assert.equal(
      githubSlug("Five-minute start: a real node (`make cluster`)"),
      "five-minute-start-a-real-node-make-cluster",
    );
    assert.equal(
      githubSlug("Wiring kube-apiserver: `manifests/apiserver/`"),
      "wiring-kube-apiserver-manifestsapiserver",
    );
    assert.equal(githubSlug("Next to vCluster's own syncer"), "next-to-vclusters-own-syncer");
    assert.deepEqual([...anchors("# A\n\n## A\n\n```sh\n# not a heading\n```\n")], ["a", "a-1"]);
  });

  for (const page of PAGES) {
    it(`${page}: every relative link names a file that exists, and an anchor it has`, () => {
      const text = repoFile(page);
      const broken: string[] = [];
      for (const link of relativeLinks(text)) {
        const [path, fragment] = link.split("#", 2) as [string, string | undefined];
        const target = path === "" ? page : normalize(join(dirname(page), path));
        if (!existsSync(join(repoRoot, target))) {
          broken.push(`${link}: no file ${target}`);
          continue;
        }
        if (
          fragment !== undefined &&
          target.endsWith(".md") &&
          !anchors(repoFile(target)).has(fragment)
        )
          broken.push(`${link}: ${target} has no anchor #${fragment}`);
      }
      assert.deepEqual(broken, []);
    });
  }
});
