// Package pyexpr translates the expressions in Julep task fields to JSONata, and evaluates in Go
// the ones JSONata cannot express.
//
// A Julep field holds a Python expression ("$ _.topic.upper()"), a template ("Hello {{ _.name }}",
// which Julep v1 evaluates as the f-string f”'Hello { _.name }”') or a literal. Compile parses the
// Python expression subset Julep's evaluator accepts (simpleeval over Python's grammar) with a
// parser of its own, and writes JSONata that gives the value Python would: Python's truthiness,
// value-returning and/or, floor division and modulo, str() and repr() spellings, list-preserving
// comprehensions. Helpers the translation needs are bound in a block around the expression.
//
// Eval runs the rest with go.starlark.net, a Python dialect: the same tree is written as Starlark
// with only Julep's names, constants, allowed functions and stdlib members reachable, bounded in
// steps and by the context. Classify says which of the two a field needs, or why it is refused;
// Names lists the Julep names a field reads.
//
// README.md in this directory documents the mapping, what is refused and why, and the count over
// the expressions of Julep's own documentation and cookbooks.
package pyexpr
