package pyexpr

import "errors"

// Class is how a field value runs in a compiled state machine.
type Class int

const (
	// ToJSONata compiles: the state evaluates it as JSONata.
	ToJSONata Class = iota
	// NeedsEval has a construct JSONata lacks; Eval runs it (in a Lambda).
	NeedsEval
	// Refused runs nowhere: a syntax error, a name outside Julep's, or a function sinew lacks.
	Refused
)

func (c Class) String() string {
	switch c {
	case ToJSONata:
		return "jsonata"
	case NeedsEval:
		return "eval"
	}
	return "refused"
}

// Classify reports whether src compiles to JSONata, needs Eval, or is refused. The error is nil
// for ToJSONata; for NeedsEval it is the *Unsupported that kept it from JSONata; for Refused it
// is the reason (*Unsupported or *SyntaxError). names is Compile's; Eval is taken to bind the
// same names.
func Classify(src string, names map[string]string) (Class, error) {
	_, err := Compile(src, names)
	if err == nil {
		return ToJSONata, nil
	}
	var u *Unsupported
	if !errors.As(err, &u) {
		return Refused, err
	}
	f, perr := parse(src)
	if perr != nil {
		return Refused, perr
	}
	env := map[string]bool{}
	for k := range names {
		env[k] = true
	}
	if _, serr := toStarlark(f, env); serr != nil {
		return Refused, serr
	}
	return NeedsEval, err
}

// Names gives the Julep names src reads (not its comprehension variables, constants, allowed
// functions or stdlib modules), sorted: the names a compiled state must bind for it.
func Names(src string) ([]string, error) {
	f, err := parse(src)
	if err != nil {
		return nil, err
	}
	if f.tree == nil {
		return nil, nil
	}
	seen := map[string]bool{}
	walk(f.tree, map[string]bool{}, func(id string) {
		if _, c := julepConstants[id]; !c && !allowedFunctions[id] && !julepModules[id] {
			seen[id] = true
		}
	})
	return sortedSet(seen), nil
}
