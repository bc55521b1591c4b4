package main

import (
	"fmt"
	"regexp"
	"strings"

	"sinew/internal/deploy"
	"sinew/internal/localaws/localnames"
)

// pseudo are the pseudo parameters, as local mode's account and Region.
var pseudo = map[string]string{
	"AWS::Region": localnames.Region, "AWS::AccountId": localnames.Account, "AWS::Partition": "aws",
	"AWS::URLSuffix": "amazonaws.com", "AWS::NoValue": "",
}

func (s *stack) refValue(name string) (any, error) {
	if v, ok := pseudo[name]; ok {
		return v, nil
	}
	switch name {
	case "AWS::StackName":
		return s.name, nil
	case "AWS::StackId":
		return "arn:aws:cloudformation:" + localnames.Region + ":" + localnames.Account + ":stack/" + s.name + "/00000000-0000-0000-0000-000000000000", nil
	}
	if v, ok := s.ref[name]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("a Ref to %s: no such resource or parameter", name)
}

// getAtt gives Arn (and a few names) of a resource; any other attribute is a placeholder that
// matches nothing, so a statement naming it only ever shows as unused.
func (s *stack) getAtt(arg any) (any, error) {
	var id, attr string
	switch a := arg.(type) {
	case []any:
		if len(a) == 2 {
			id, attr = str(a[0]), str(a[1])
		}
	case string:
		id, attr, _ = strings.Cut(a, ".")
	}
	if _, ok := s.resources[id]; !ok {
		return nil, fmt.Errorf("Fn::GetAtt %v: no such resource", arg)
	}
	switch attr {
	case "Arn":
		return s.arn[id], nil
	case "Name", "QueueName", "TopicName":
		return s.ref[id], nil
	}
	return "unresolved:" + id + "." + attr, nil
}

func (s *stack) join(arg any) (any, error) {
	a, _ := arg.([]any)
	if len(a) != 2 {
		return nil, fmt.Errorf("Fn::Join %v", arg)
	}
	list, err := s.resolve(a[1])
	if err != nil {
		return nil, err
	}
	l, ok := list.([]any)
	if !ok {
		return nil, fmt.Errorf("Fn::Join of %v", list)
	}
	parts := make([]string, len(l))
	for i, p := range l {
		parts[i] = fmt.Sprint(p)
	}
	return s.localize(strings.Join(parts, str(a[0]))), nil
}

var subVar = regexp.MustCompile(`\$\{([^}!][^}]*)\}`)

// sub evaluates Fn::Sub: "text ${Name} ${Id.Attr}" or [text, {Name: value}]; ${!x} is the text ${x}.
func (s *stack) sub(arg any) (any, error) {
	text, vars := "", map[string]any{}
	switch a := arg.(type) {
	case string:
		text = a
	case []any:
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Sub %v", arg)
		}
		text = str(a[0])
		m, _ := a[1].(map[string]any)
		for k, v := range m {
			r, err := s.resolve(v)
			if err != nil {
				return nil, err
			}
			vars[k] = r
		}
	}
	var firstErr error
	out := subVar.ReplaceAllStringFunc(text, func(m string) string {
		name := m[2 : len(m)-1]
		if v, ok := vars[name]; ok {
			return fmt.Sprint(v)
		}
		var v any
		var err error
		if id, attr, ok := strings.Cut(name, "."); ok {
			v, err = s.getAtt([]any{id, attr})
		} else {
			v, err = s.refValue(name)
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return fmt.Sprint(v)
	})
	return s.localize(strings.ReplaceAll(out, "${!", "${")), firstErr
}

// localize renames the deployed names of the described functions and state machines
// (<stack>-<name>) in ARNs written as text, as the stack writes the ARNs it refers to by name.
func (s *stack) localize(text string) string {
	for _, kind := range []string{":function:", ":stateMachine:", ":execution:"} {
		prefix := kind + s.name + "-"
		var names []string
		if kind == ":function:" {
			for _, f := range deploy.Functions() {
				names = append(names, f.Name)
			}
		} else {
			for _, m := range deploy.StateMachines() {
				names = append(names, m.Name)
			}
			// Julep tasks' machines, made at run time: <stack>-task-*.
			names = append(names, strings.TrimSuffix(deploy.TaskMachines, "*"))
		}
		for i := strings.Index(text, prefix); i >= 0; {
			rest := text[i+len(prefix):]
			if described(rest, names) {
				text = text[:i] + kind + rest
			}
			j := strings.Index(text[i+1:], prefix)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return text
}

// described reports whether rest starts with one of names, whole (followed by its end, ':' or '*').
func described(rest string, names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(rest, n) && (len(rest) == len(n) || strings.ContainsRune(":*/", rune(rest[len(n)]))) {
			return true
		}
	}
	return false
}
