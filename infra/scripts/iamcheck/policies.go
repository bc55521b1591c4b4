package main

import (
	"fmt"
	"slices"
	"strings"
)

// policies are the stack's policies, resolved: every document by name, which ones each role holds
// and which one guards each resource, and the Allow statements whose use the check counts.
type policies struct {
	docs     map[string]any
	identity map[string][]string // role logical id -> its policies' names
	resource map[string]string   // resource ARN -> its policy's name
	owner    map[string]string   // policy name -> what holds it ("role api", "key SecretsKey...")
	stmts    []statement
	warnings []string
	note     func(st map[string]any) string // why local mode cannot use a statement, if known
}

// statement is one Allow statement of a policy, as the simulator numbers them (from 1).
type statement struct {
	policy, sid, owner, note string
	index                    int
	actions, resources       []string
	counted                  bool // held by a principal's role or guarding a resource: its use is counted
}

func (st statement) id() string { return fmt.Sprintf("%s#%d", st.policy, st.index) }

// collect resolves the identity policies of every role (AWS::IAM::Policy, AWS::IAM::ManagedPolicy,
// a role's inline Policies and ManagedPolicyArns) and the resource policies (key policies, Lambda
// permissions, queue, topic, bus and table policies).
func (s *stack) collect() (*policies, error) {
	p := &policies{docs: map[string]any{}, identity: map[string][]string{}, resource: map[string]string{}, owner: map[string]string{}}
	dests, err := s.destinations()
	if err != nil {
		return nil, err
	}
	p.note = func(st map[string]any) string { return s.note(st, dests) }
	perms := map[string][]any{} // function ARN -> its permissions as statements
	for _, id := range sortedKeys(s.resources) {
		var err error
		switch r := s.resources[id]; r.Type {
		case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
			err = p.attach(s, id, r.Properties["PolicyDocument"], r.Properties["Roles"])
		case "AWS::IAM::Role":
			err = p.inline(s, id, r)
		case "AWS::KMS::Key":
			err = p.guard(s, id, "key "+id, s.arn[id], r.Properties["KeyPolicy"])
		case "AWS::SQS::QueuePolicy":
			err = p.guardEach(s, id, r.Properties["PolicyDocument"], r.Properties["Queues"], "queue")
		case "AWS::SNS::TopicPolicy":
			err = p.guardEach(s, id, r.Properties["PolicyDocument"], r.Properties["Topics"], "topic")
		case "AWS::DynamoDB::Table":
			if rp, ok := r.Properties["ResourcePolicy"].(map[string]any); ok {
				err = p.guard(s, id, "table "+id, s.arn[id], rp["PolicyDocument"])
			}
		case "AWS::Events::EventBusPolicy":
			err = p.busPolicy(s, id, r)
		case "AWS::Lambda::Permission":
			fn, st, perr := s.permission(id, r)
			err = perr
			perms[fn] = append(perms[fn], st)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
	}
	for _, fn := range sortedKeys(perms) {
		name := "permissions of " + fn[strings.LastIndex(fn, ":")+1:]
		p.add(name, "function "+fn[strings.LastIndex(fn, ":")+1:], map[string]any{"Version": "2012-10-17", "Statement": perms[fn]}, true)
		p.resource[fn] = name
	}
	return p, nil
}

// add keeps a resolved document and catalogues its Allow statements.
func (p *policies) add(name, owner string, doc any, counted bool) {
	p.docs[name], p.owner[name] = doc, owner
	m, _ := doc.(map[string]any)
	stmts, ok := m["Statement"].([]any)
	if !ok && m["Statement"] != nil {
		stmts = []any{m["Statement"]}
	}
	for i, st := range stmts {
		sm, _ := st.(map[string]any)
		if sm["Effect"] != "Allow" {
			continue
		}
		p.stmts = append(p.stmts, statement{policy: name, sid: str(sm["Sid"]), owner: owner, index: i + 1,
			actions: strs(sm["Action"]), resources: strs(sm["Resource"]), note: p.note(sm), counted: counted})
	}
}

func (p *policies) attach(s *stack, id string, doc, roles any) error {
	resolved, err := s.resolve(doc)
	if err != nil {
		return err
	}
	owners, counted := []string{}, false
	for _, r := range asList(roles) {
		role := refID(r)
		p.identity[role] = append(p.identity[role], id)
		owners = append(owners, s.roleName(role))
		_, principal := s.roles[role]
		counted = counted || principal
	}
	if len(owners) == 0 {
		owners = []string{"(none)"}
	}
	p.add(id, "role "+strings.Join(owners, ","), resolved, counted)
	return nil
}

// inline adds a role's own Policies and its ManagedPolicyArns: one of the stack's managed policies is
// attached by its logical id; an AWS managed policy cannot be read here, and is said.
func (p *policies) inline(s *stack, id string, r resource) error {
	for _, ip := range asList(r.Properties["Policies"]) {
		m, _ := ip.(map[string]any)
		name := id + "/" + str(m["PolicyName"])
		doc, err := s.resolve(m["PolicyDocument"])
		if err != nil {
			return err
		}
		p.identity[id] = append(p.identity[id], name)
		_, principal := s.roles[id]
		p.add(name, "role "+s.roleName(id), doc, principal)
	}
	for _, arn := range asList(r.Properties["ManagedPolicyArns"]) {
		if mp := refID(arn); mp != "" && s.resources[mp].Type == "AWS::IAM::ManagedPolicy" {
			p.identity[id] = append(p.identity[id], mp)
			continue
		}
		v, _ := s.resolve(arn)
		p.warnings = append(p.warnings, fmt.Sprintf("role %s: managed policy %v is not in the template: what it grants is not seen", s.roleName(id), v))
	}
	return nil
}

func (p *policies) guard(s *stack, name, owner, arn string, doc any) error {
	resolved, err := s.resolve(doc)
	if err != nil {
		return err
	}
	p.add(name, owner, resolved, true)
	p.resource[arn] = name
	return nil
}

func (p *policies) guardEach(s *stack, id string, doc, refs any, kind string) error {
	for _, r := range asList(refs) {
		target := refID(r)
		if err := p.guard(s, id, kind+" "+target, s.arn[target], doc); err != nil {
			return err
		}
	}
	return nil
}

func (p *policies) busPolicy(s *stack, id string, r resource) error {
	bus := "default"
	if b, ok := r.Properties["EventBusName"]; ok {
		v, err := s.resolve(b)
		if err != nil {
			return err
		}
		bus = fmt.Sprint(v)
	}
	st := r.Properties["Statement"]
	if st == nil {
		return fmt.Errorf("an event bus policy without Statement is not read by the IAM check")
	}
	return p.guard(s, id, "bus "+bus, eventBusARN(bus), map[string]any{"Version": "2012-10-17", "Statement": []any{st}})
}

// permission is an AWS::Lambda::Permission as the statement Lambda adds to the function's policy.
func (s *stack) permission(id string, r resource) (fn string, st map[string]any, err error) {
	props, err := s.resolve(r.Properties)
	if err != nil {
		return "", nil, err
	}
	m := props.(map[string]any)
	fn = str(m["FunctionName"])
	if !strings.HasPrefix(fn, "arn:") {
		fn = functionARN(fn)
	}
	var principal any = map[string]any{"AWS": m["Principal"]}
	if p := str(m["Principal"]); strings.HasSuffix(p, ".amazonaws.com") {
		principal = map[string]any{"Service": p}
	} else if p == "*" {
		principal = "*"
	}
	st = map[string]any{"Sid": id, "Effect": "Allow", "Principal": principal, "Action": m["Action"], "Resource": fn}
	cond := map[string]any{}
	if v, ok := m["SourceArn"]; ok {
		cond["ArnLike"] = map[string]any{"aws:SourceArn": v}
	}
	if v, ok := m["SourceAccount"]; ok {
		cond["StringEquals"] = map[string]any{"aws:SourceAccount": v}
	}
	if len(cond) > 0 {
		st["Condition"] = cond
	}
	return fn, st, nil
}

// note says why local mode cannot use a statement, where that is known: AWS's own services use it
// (logs and traces, DynamoDB's use of the table key, a service principal, Lambda's asynchronous
// destinations), or it is for a role no function or state machine assumes, or for the account.
func (s *stack) note(st map[string]any, dests map[string]bool) string {
	acts, res := strs(st["Action"]), strs(st["Resource"])
	if len(acts) > 0 && !slices.ContainsFunc(acts, func(a string) bool { return !strings.HasPrefix(a, "logs:") && !strings.HasPrefix(a, "xray:") }) {
		return "logs and traces: written by Lambda and Step Functions, not by sinew's code"
	}
	cond, _ := st["Condition"].(map[string]any)
	var principals []string
	for op, c := range cond {
		m, _ := c.(map[string]any)
		if m["kms:ViaService"] != nil {
			return "used by DynamoDB on the caller's behalf (kms:ViaService): local mode has no table key"
		}
		if strings.HasPrefix(op, "Arn") && m["aws:PrincipalArn"] != nil {
			principals = append(principals, strs(m["aws:PrincipalArn"])...)
		}
	}
	if pr, ok := st["Principal"].(map[string]any); ok && pr["Service"] != nil {
		return fmt.Sprintf("%v acts here: local mode records no such request", pr["Service"])
	}
	if len(res) > 0 && !slices.ContainsFunc(res, func(r string) bool { return !dests[r] }) {
		return "Lambda's asynchronous-invocation destination: Lambda sends to it with the function's role; local mode has no queue"
	}
	if len(principals) > 0 && !slices.ContainsFunc(principals, s.isPrincipalRole) {
		return "for " + strings.Join(principals, ", ") + ", which no function or state machine assumes"
	}
	if _, ok := st["Principal"]; ok && len(principals) == 0 {
		return "the account's own: key administration, or use delegated to the roles' policies"
	}
	return ""
}

// destinations are the ARNs Lambda delivers asynchronous invocations' outcomes to.
func (s *stack) destinations() (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range sortedKeys(s.resources) {
		r := s.resources[id]
		if r.Type != "AWS::Lambda::EventInvokeConfig" {
			continue
		}
		dc, _ := r.Properties["DestinationConfig"].(map[string]any)
		for _, k := range []string{"OnFailure", "OnSuccess"} {
			d, _ := dc[k].(map[string]any)
			if d == nil {
				continue
			}
			v, err := s.resolve(d["Destination"])
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(v)] = true
		}
	}
	return out, nil
}

func (s *stack) isPrincipalRole(arn string) bool {
	for id := range s.roles {
		if s.arn[id] == arn {
			return true
		}
	}
	return false
}

func (s *stack) roleName(id string) string {
	if p, ok := s.roles[id]; ok {
		return p.name
	}
	return id
}
