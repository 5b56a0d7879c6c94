// How vCluster reads the plain scalars of a vcluster.yaml (docs/decisions.md EPS-34).
//
// Every reader of a vcluster.yaml on vCluster's side decodes it with go-yaml v2, a YAML 1.1 parser:
// helm reads values files with sigs.k8s.io/yaml, `vcluster create` merges them with ghodss/yaml,
// and the syncer decodes its config with sigs.k8s.io/yaml's UnmarshalStrict. So `enabled: yes`
// and `enabled: on` are true there, where YAML 1.2 reads the strings "yes" and "on". vgate reads
// vcluster.yaml with the same rules, written here from go-yaml v2's resolve.go (`resolve`):
// - null: ``, `~`, `null`, `Null`, `NULL`; booleans: y Y yes Yes YES true True TRUE on On ON and
//   n N no No NO false False FALSE off Off OFF (yaml's own YAML 1.1 tags, which list the same);
// - `.inf`, `.nan` and their spellings (yaml's YAML 1.1 tag, the same list);
// - a scalar starting with a digit or a sign is a number when, with every `_` removed, Go's
//   strconv.ParseInt or ParseUint (base 0: `0x`, `0o`, `0b` and a leading `0` for octal) accepts
//   it, or when it has the form [-+](.d+|d+(.d*)?)([eE][-+]?d+) and is finite; a scalar starting
//   with `.` is a number when Go's ParseFloat accepts it (underscores only between digits);
// - everything else is a string. Timestamps stay strings (go-yaml v2 keeps them as text when it
//   decodes into an interface, as helm and vCluster do), and base-60 numbers such as 1:20 are
//   strings, unlike in YAML 1.1 itself.
// Explicit tags other than !!str, !!bool, !!int, !!float, !!null, !!map and !!seq (such as
// `!!binary`, `!!set` or a local `!tag`) are refused as unknown tags by config/yaml-document.ts.

import type { ScalarTag, Tags } from "yaml";

/** The tags of yaml's YAML 1.1 schema that go-yaml v2 reads the same way. */
const KEPT_TAGS = new Set([
  "tag:yaml.org,2002:map",
  "tag:yaml.org,2002:seq",
  "tag:yaml.org,2002:str",
  "tag:yaml.org,2002:null",
  "tag:yaml.org,2002:bool",
  "tag:yaml.org,2002:merge",
]);

type Tag = Exclude<Tags[number], string>;

/** yaml's `.inf`/`.nan` tag, the one float tag kept: go-yaml v2 lists the same spellings. */
function isSpecialFloat(tag: Tag): boolean {
  return tag.tag === "tag:yaml.org,2002:float" && "test" in tag && tag.test?.test(".nan") === true;
}

const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
/** strconv.ParseInt/ParseUint's syntax for base 0, once go-yaml removed the underscores. */
const GO_INT = /^([-+]?)(0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/;
/** go-yaml v2's yamlStyleFloat. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** What Go's ParseFloat accepts of a scalar that starts with ".", underscores included. */
const DOT_FLOAT = /^\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?$/;

function goInt(plain: string): number | undefined {
  const m = GO_INT.exec(plain);
  if (!m) return undefined;
  const [, sign = "", digits = ""] = m;
  const prefix = digits.slice(0, 2).toLowerCase();
  let magnitude: bigint;
  if (prefix === "0b" || prefix === "0o" || prefix === "0x") magnitude = BigInt(digits);
  else if (digits.length > 1 && digits.startsWith("0")) magnitude = BigInt(`0o${digits.slice(1)}`);
  else magnitude = BigInt(digits);
  // ParseInt takes a sign and int64's range; ParseUint, tried next, no sign and uint64's.
  const max = sign === "-" ? INT64_MAX + 1n : sign === "+" ? INT64_MAX : UINT64_MAX;
  const fits = magnitude <= max;
  if (!fits) return undefined;
  return sign === "-" ? -Number(magnitude) : Number(magnitude);
}

/** The number go-yaml v2 makes of a plain scalar, or undefined when it is a string to it. */
export function goYamlNumber(text: string): number | undefined {
  const first = text.charAt(0);
  if (first === ".") {
    if (!DOT_FLOAT.test(text)) return undefined;
    const value = Number(text.replaceAll("_", ""));
    return Number.isFinite(value) ? value : undefined;
  }
  if (!/^[-+0-9]/.test(first)) return undefined;
  const plain = text.replaceAll("_", "");
  const int = goInt(plain);
  if (int !== undefined) return int;
  if (!YAML_STYLE_FLOAT.test(plain)) return undefined;
  const value = Number(plain);
  return Number.isFinite(value) ? value : undefined;
}

/** yaml asks a tag's `test` whether a plain scalar is one of its values; this one asks Go's rules. */
class GoNumberTest extends RegExp {
  constructor() {
    super("(?:go-yaml v2 number)");
  }
  override test(text: string): boolean {
    return goYamlNumber(text) !== undefined;
  }
}

/** One tag for go-yaml's numbers, under both names so that `!!int 1` and `!!float 1` resolve. */
function goNumberTag(tag: string): ScalarTag {
  return {
    identify: (value) => typeof value === "number",
    default: true,
    tag,
    test: new GoNumberTest(),
    resolve: (text) => goYamlNumber(text) ?? Number.NaN,
  };
}

/** yaml's YAML 1.1 tags narrowed to what go-yaml v2 does (for the `customTags` option). */
export function goYamlTags(tags: Tags): Tags {
  const kept = tags.filter(
    (tag) => typeof tag !== "string" && (KEPT_TAGS.has(tag.tag) || isSpecialFloat(tag)),
  );
  return [...kept, goNumberTag("tag:yaml.org,2002:int"), goNumberTag("tag:yaml.org,2002:float")];
}
