package main

import (
	"fmt"
	"maps"
	"slices"

	"sinew/internal/iamrec"
	"sinew/internal/localaws/localnames"
)

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// asList is v as a list: a list as is, one value as a list of it, nil as none.
func asList(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	return []any{v}
}

// strs is a policy element (one string or a list) as strings.
func strs(v any) []string {
	var out []string
	for _, e := range asList(v) {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

func functionARN(name string) string { return iamrec.FunctionARN(name, "") }

func eventBusARN(bus string) string { return iamrec.EventBusARN(bus) }

// principalARN is the session a role's requests are signed with in AWS: Lambda and Step Functions
// assume the role (here named after its function or state machine).
func principalARN(name string) string {
	return "arn:aws:sts::" + localnames.Account + ":assumed-role/" + name + "/" + name
}
