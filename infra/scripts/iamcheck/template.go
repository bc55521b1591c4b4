package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sinew/internal/deploy"
	"sinew/internal/iamrec"
	"sinew/internal/localaws/localnames"
)

// resource is one resource of a CloudFormation template.
type resource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
}

// principal is who a role belongs to, as the recording names it.
type principal struct {
	name, typ string // a function's or state machine's name; iamrec.PrincipalFunction or PrincipalStateMachine
}

// stack is a synthesized template with every resource given the identity it has in local mode
// (localnames): the described functions and state machines by their names, the table, the secrets
// key and the event bus by the function variables that carry them (deploy.ValueOf), the
// status-change rule by its target. Other resources get names of their logical ids.
type stack struct {
	name      string // the stack's name: the prefix of its functions' and state machines' names
	resources map[string]resource
	ref, arn  map[string]string    // what Ref and Fn::GetAtt <id>.Arn give, by logical id
	roles     map[string]principal // the principals' roles, by logical id
	keyAlias  map[string]string    // KMS keys with a local alias: alias -> logical id
}

// loadStack reads a template; the stack's name is the file's (<stack>.template.json, as cdk synth
// names it).
func loadStack(path string) (*stack, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t struct {
		Resources map[string]resource `json:"Resources"`
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &stack{name: strings.TrimSuffix(filepath.Base(path), ".template.json"), resources: t.Resources,
		ref: map[string]string{}, arn: map[string]string{}, roles: map[string]principal{}, keyAlias: map[string]string{}}
	if err := s.mapDescribed(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.mapByVariables(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.mapTriggerRules()
	for id, r := range s.resources {
		if _, ok := s.arn[id]; !ok {
			s.ref[id], s.arn[id] = generic(id, r)
		}
	}
	return s, nil
}

// mapDescribed finds each described function and state machine (named <stack>-<name>) and its role.
func (s *stack) mapDescribed() error {
	byName := map[string]string{}
	for id, r := range s.resources {
		switch r.Type {
		case "AWS::Lambda::Function":
			byName["function "+str(r.Properties["FunctionName"])] = id
		case "AWS::StepFunctions::StateMachine":
			byName["machine "+str(r.Properties["StateMachineName"])] = id
		}
	}
	var missing []string
	for _, f := range deploy.Functions() {
		id, ok := byName["function "+s.name+"-"+f.Name]
		if !ok {
			missing = append(missing, "function "+f.Name)
			continue
		}
		s.ref[id], s.arn[id] = f.Name, localnames.FunctionARN(f.Name)
		s.roles[roleID(s.resources[id].Properties["Role"])] = principal{f.Name, iamrec.PrincipalFunction}
	}
	for _, m := range deploy.StateMachines() {
		id, ok := byName["machine "+s.name+"-"+m.Name]
		if !ok {
			missing = append(missing, "state machine "+m.Name)
			continue
		}
		s.ref[id], s.arn[id] = localnames.StateMachineARN(m.Name), localnames.StateMachineARN(m.Name)
		s.roles[roleID(s.resources[id].Properties["RoleArn"])] = principal{m.Name, iamrec.PrincipalStateMachine}
	}
	if len(missing) > 0 {
		return fmt.Errorf("not in the stack %q (is it this stack's template?): %s", s.name, strings.Join(missing, ", "))
	}
	for id, p := range s.roles {
		s.ref[id], s.arn[id] = p.name, roleARN(p.name)
	}
	return nil
}

// mapByVariables gives the resources the functions' variables carry (the table, the secrets key,
// the event bus) the values local mode gives those variables.
func (s *stack) mapByVariables() error {
	for _, r := range s.resources {
		if r.Type != "AWS::Lambda::Function" {
			continue
		}
		env, _ := r.Properties["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		for k, v := range vars {
			val := deploy.ValueOf(k)
			id := refID(v)
			if id == "" {
				continue
			}
			local, err := localnames.Value(val)
			if err != nil {
				continue // functions and state machines are mapped by name
			}
			var ref, arn string
			switch val.Kind {
			case deploy.TableName:
				ref, arn = local, localnames.TableARN(local)
			case deploy.EventBusName:
				ref, arn = local, localnames.EventBusARN(local)
			case deploy.SecretsKeyID:
				ref, arn = id, keyARN(id)
				s.keyAlias[local] = id
			default:
				continue
			}
			if old, ok := s.arn[id]; ok && old != arn {
				return fmt.Errorf("%s is both %s and %s in local mode", id, old, arn)
			}
			s.ref[id], s.arn[id] = ref, arn
		}
	}
	return nil
}

// mapTriggerRules names the rules that target the functions deploy.TriggerExecutionChanged and
// deploy.TriggerSweep trigger as local mode's routes stand for them: the status change's rule has
// an event pattern, the sweep's a schedule (both target settle).
func (s *stack) mapTriggerRules() {
	names := map[deploy.Trigger]string{deploy.TriggerExecutionChanged: localnames.StatusChangeRule, deploy.TriggerSweep: localnames.SweepRule}
	for _, f := range deploy.Functions() {
		for _, t := range f.Triggers {
			name, ok := names[t]
			if !ok {
				continue
			}
			for id, r := range s.resources {
				_, scheduled := r.Properties["ScheduleExpression"]
				if r.Type != "AWS::Events::Rule" || scheduled != (t == deploy.TriggerSweep) {
					continue
				}
				targets, _ := r.Properties["Targets"].([]any)
				for _, tg := range targets {
					m, _ := tg.(map[string]any)
					if refID(m["Arn"]) != "" && s.ref[refID(m["Arn"])] == f.Name {
						s.ref[id], s.arn[id] = name, localnames.RuleARN(name)
					}
				}
			}
		}
	}
}

// generic is what Ref and GetAtt Arn give for a resource local mode has no name for: its name
// property when the template writes one, else its logical id, in its type's ARN form.
func generic(id string, r resource) (ref, arn string) {
	name := id
	for _, p := range []string{"RoleName", "QueueName", "TopicName", "Name", "EventBusName", "LogGroupName", "TableName", "FunctionName", "StateMachineName", "ManagedPolicyName"} {
		if v, ok := r.Properties[p].(string); ok {
			name = v
		}
	}
	ra := localnames.Region + ":" + localnames.Account
	switch r.Type {
	case "AWS::IAM::Role":
		return name, roleARN(name)
	case "AWS::IAM::ManagedPolicy":
		return "arn:aws:iam::" + localnames.Account + ":policy/" + name, "arn:aws:iam::" + localnames.Account + ":policy/" + name
	case "AWS::KMS::Key":
		return id, keyARN(id)
	case "AWS::SQS::Queue":
		return "https://sqs." + localnames.Region + ".amazonaws.com/" + localnames.Account + "/" + name, "arn:aws:sqs:" + ra + ":" + name
	case "AWS::SNS::Topic":
		return "arn:aws:sns:" + ra + ":" + name, "arn:aws:sns:" + ra + ":" + name
	case "AWS::Logs::LogGroup":
		return name, "arn:aws:logs:" + ra + ":log-group:" + name + ":*"
	case "AWS::Events::Rule":
		return name, "arn:aws:events:" + ra + ":rule/" + name
	case "AWS::Events::EventBus":
		return name, localnames.EventBusARN(name)
	case "AWS::DynamoDB::Table":
		return name, localnames.TableARN(name)
	case "AWS::Lambda::Function":
		return name, localnames.FunctionARN(name)
	case "AWS::StepFunctions::StateMachine":
		return localnames.StateMachineARN(name), localnames.StateMachineARN(name)
	}
	return id, "arn:aws:cloudformation:" + ra + ":unresolved/" + id
}

func roleARN(name string) string { return "arn:aws:iam::" + localnames.Account + ":role/" + name }

// keyARN is the ARN a template's key stands for in the check: local mode's keys differ with each
// data directory, so the recorded ones are renamed to it by their alias (stack.keyAlias).
func keyARN(id string) string {
	return "arn:aws:kms:" + localnames.Region + ":" + localnames.Account + ":key/" + id
}

// refID is the logical id a {"Ref": id} or {"Fn::GetAtt": [id, ...]} names, else "".
func refID(v any) string {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return ""
	}
	if r, ok := m["Ref"].(string); ok {
		return r
	}
	switch g := m["Fn::GetAtt"].(type) {
	case []any:
		if len(g) == 2 {
			return str(g[0])
		}
	case string:
		id, _, _ := strings.Cut(g, ".")
		return id
	}
	return ""
}

func roleID(v any) string { return refID(v) }

func str(v any) string {
	s, _ := v.(string)
	return s
}

// resolve evaluates the intrinsic functions in v (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select,
// Fn::Split and the pseudo parameters) to plain values; ARNs of the described functions and state
// machines written as text (<stack>-<name>) take their local names.
func (s *stack) resolve(v any) (any, error) {
	switch v := v.(type) {
	case string:
		return s.localize(v), nil
	case []any:
		out := make([]any, 0, len(v))
		for _, e := range v {
			r, err := s.resolve(e)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	case map[string]any:
		if len(v) == 1 {
			for k, arg := range v {
				if k == "Ref" || strings.HasPrefix(k, "Fn::") {
					return s.intrinsic(k, arg)
				}
			}
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			r, err := s.resolve(e)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

func (s *stack) intrinsic(fn string, arg any) (any, error) {
	switch fn {
	case "Ref":
		return s.refValue(str(arg))
	case "Fn::GetAtt":
		return s.getAtt(arg)
	case "Fn::Join":
		return s.join(arg)
	case "Fn::Sub":
		return s.sub(arg)
	case "Fn::Select":
		a, _ := arg.([]any)
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Select %v", arg)
		}
		idx, err := s.resolve(a[0])
		if err != nil {
			return nil, err
		}
		list, err := s.resolve(a[1])
		if err != nil {
			return nil, err
		}
		i, err := strconv.Atoi(fmt.Sprint(idx))
		l, _ := list.([]any)
		if err != nil || i < 0 || i >= len(l) {
			return nil, fmt.Errorf("Fn::Select %v of %v", idx, list)
		}
		return l[i], nil
	case "Fn::Split":
		a, _ := arg.([]any)
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Split %v", arg)
		}
		src, err := s.resolve(a[1])
		if err != nil {
			return nil, err
		}
		var out []any
		for _, p := range strings.Split(fmt.Sprint(src), str(a[0])) {
			out = append(out, p)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is not resolved by the IAM check", fn)
}
