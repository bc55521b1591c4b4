package jsonata

// frame is one scope of variable bindings; lookups walk to the enclosing frames and end at the
// built-in functions.
type frame struct {
	names  []string
	vals   []any
	parent *frame
	tuple  tuple          // a tuple stream's bindings, read in place
	global map[string]any // the root frame's extra bindings (the caller's functions and values)
}

func newFrame(parent *frame) *frame { return &frame{parent: parent} }

func (f *frame) bind(name string, v any) {
	for i, n := range f.names {
		if n == name {
			f.vals[i] = v
			return
		}
	}
	f.names = append(f.names, name)
	f.vals = append(f.vals, v)
}

func (f *frame) lookup(name string) any {
	for fr := f; fr != nil; fr = fr.parent {
		for i := len(fr.names) - 1; i >= 0; i-- {
			if fr.names[i] == name {
				return fr.vals[i]
			}
		}
		if fr.tuple != nil {
			if v, ok := fr.tuple[name]; ok {
				return v
			}
		}
		if fr.global != nil {
			if v, ok := fr.global[name]; ok {
				return v
			}
		}
	}
	if fn, ok := builtins[name]; ok {
		return fn
	}
	return nil
}

func frameFromTuple(env *frame, t tuple) *frame { return &frame{parent: env, tuple: t} }
