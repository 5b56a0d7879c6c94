// The syntax tree of kubectl's JSONPath template dialect (k8s.io/client-go/util/jsonpath,
// node.go). A template is a list of text and action lists; `{range}` and `{end}` are identifiers
// that the evaluator pairs up at run time, as client-go does, not nested blocks.

export interface ListNode {
  type: "list";
  nodes: Node[];
}
export interface TextNode {
  type: "text";
  text: string;
}
export interface FieldNode {
  type: "field";
  name: string;
}
/** One of `[start:end:step]`; `derived` marks an end computed from a single index (`[2]`). */
export interface SliceParam {
  known: boolean;
  value: number;
  derived: boolean;
}
export interface ArrayNode {
  type: "array";
  params: [SliceParam, SliceParam, SliceParam];
}
export interface FilterNode {
  type: "filter";
  left: ListNode;
  right: ListNode;
  operator: string;
}
export interface IntNode {
  type: "int";
  value: number;
}
export interface FloatNode {
  type: "float";
  value: number;
}
export interface BoolNode {
  type: "bool";
  value: boolean;
}
export interface WildcardNode {
  type: "wildcard";
}
export interface RecursiveNode {
  type: "recursive";
}
export interface UnionNode {
  type: "union";
  lists: ListNode[];
}
export interface IdentifierNode {
  type: "identifier";
  name: string;
}

export type Node =
  | ListNode
  | TextNode
  | FieldNode
  | ArrayNode
  | FilterNode
  | IntNode
  | FloatNode
  | BoolNode
  | WildcardNode
  | RecursiveNode
  | UnionNode
  | IdentifierNode;

export const newList = (): ListNode => ({ type: "list", nodes: [] });
