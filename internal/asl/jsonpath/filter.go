package jsonpath

import (
	"math/big"
	"regexp"
	"strings"
	"unicode/utf16"

	"sinew/internal/asl/jsonpath/javafmt"
)

// filter is Jayway 2.0's inline filter: criteria joined by && and ||, && binding tighter, no
// grouping parentheses (Filter.parse splits on the operators and folds the criteria).
type filter struct {
	ors [][]criterion // OR of ANDs
}

type operandKind int

const (
	opLiteral operandKind = iota // Jayway keeps unquoted literals (1999, true, null) as strings too
	opPath
	opPattern
)

type operand struct {
	kind operandKind
	str  string
	path *Path
	re   *regexp.Regexp
}

type criterion struct {
	left, right operand
	op          string // "==", "!=", "<", "<=", ">", ">=", "=~", or "" for an existence check
	exists      bool   // for op "": [?(@.a)] is true, [?(!@.a)] false
}

// Operators in the order Jayway 2.0's Criteria.parse looks for them (first found wins).
var criteriaOps = []string{"==", ">=", "<=", "!=", "<", ">", "=~"}

var opSplit = regexp.MustCompile(`&&|\|\|`)

func parseFilter(frag string) (*filter, error) {
	s := strings.TrimSpace(frag)
	bad := func(msg string) (*filter, error) { return nil, compileError(msg + ". " + frag) }
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return bad("Filter must start with '[' and end with ']'")
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	if !strings.HasPrefix(s, "?") {
		return bad("Filter must start with '[?' and end with ']'")
	}
	s = strings.TrimSpace(s[1:])
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return bad("Filter must start with '[?(' and end with ')]'")
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	ops := opSplit.FindAllString(s, -1)
	parts := opSplit.Split(s, -1)
	f := &filter{}
	var and []criterion
	for i, part := range parts {
		c, err := parseCriterion(cleanCriterion(part))
		if err != nil {
			return nil, err
		}
		and = append(and, c)
		if i == len(parts)-1 || ops[i] == "||" {
			f.ors = append(f.ors, and)
			and = nil
		}
	}
	return f, nil
}

// cleanCriterion strips the grouping characters Jayway strips: leading "[?( " and trailing ") ".
func cleanCriterion(s string) string {
	s = strings.TrimLeft(s, "[?( ")
	s = strings.TrimRight(s, ") ")
	return s
}

func parseCriterion(s string) (criterion, error) {
	if s == "" {
		return criterion{}, compileError("Invalid filter: empty criterion")
	}
	op, left, right := "", s, ""
	for _, o := range criteriaOps {
		if i := strings.Index(s, o); i >= 0 {
			op, left, right = o, strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(o):])
			break
		}
	}
	c := criterion{op: op, exists: true}
	isPath := func(x string) bool {
		return strings.HasPrefix(x, "$") || strings.HasPrefix(x, "@") || strings.HasPrefix(x, "!@")
	}
	var err error
	if isPath(left) {
		if strings.HasPrefix(left, "!") {
			c.exists = false
			left = left[1:]
		}
		if c.left, err = filterPath(left); err != nil {
			return c, err
		}
	} else if c.left, err = literal(left); err != nil {
		return c, err
	}
	if op == "" {
		if c.left.kind != opPath {
			return c, compileError("CriteriaType  can not be parsed")
		}
		return c, nil
	}
	if !c.exists {
		return c, compileError("Invalid negation! Can only be used for existence check e.g [?(!@.foo)]")
	}
	if isPath(right) {
		if strings.HasPrefix(right, "!") {
			return c, compileError("Invalid negation! Can only be used for existence check e.g [?(!@.foo)]")
		}
		c.right, err = filterPath(right)
	} else {
		c.right, err = literal(right)
	}
	return c, err
}

// filterPath compiles a path inside a filter: @ is the element tested, $ the document root. It
// must be definite.
func filterPath(s string) (operand, error) {
	rel := strings.HasPrefix(s, "@")
	if rel {
		s = "$" + s[1:]
	}
	if strings.HasPrefix(s, "$$") {
		return operand{}, compileError("the predicate path: " + s + " may not name the context object")
	}
	p, err := parse(s, false)
	if err != nil {
		return operand{}, compileError(err.(*Error).Msg)
	}
	if p.root == rootVar {
		return operand{}, compileError("Invalid path " + s)
	}
	if !p.definite {
		return operand{}, compileError("the predicate path: " + s + " is not definite")
	}
	if rel {
		p.root = rootItem
	}
	return operand{kind: opPath, path: p}, nil
}

func literal(s string) (operand, error) {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return operand{kind: opLiteral, str: s[1 : len(s)-1]}, nil
	}
	if len(s) >= 2 && s[0] == '/' && (s[len(s)-1] == '/' || (len(s) >= 3 && s[len(s)-2] == '/' && s[len(s)-1] == 'i')) {
		last := strings.LastIndexByte(s, '/')
		expr := s[1:last]
		if strings.HasSuffix(s, "i") {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile("^(?:" + expr + ")$") // Java's matches() is a whole-string match
		if err != nil {
			return operand{}, compileError("Invalid regular expression " + s + ": " + err.Error())
		}
		return operand{kind: opPattern, re: re, str: s}, nil
	}
	return operand{kind: opLiteral, str: s}, nil
}

func (f *filter) accept(item, root any) bool {
	for _, and := range f.ors {
		ok := true
		for i := range and {
			if !and[i].eval(item, root) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// value is an operand's value: a JSON value, a literal string, or a pattern.
func (o *operand) value(item, root any) (any, bool) {
	switch o.kind {
	case opPath:
		model := root
		if o.path.root == rootItem {
			model = item
		}
		v, err := o.path.eval(model, root)
		if err != nil {
			return nil, false
		}
		return v, true
	case opPattern:
		return o.re, true
	}
	return o.str, true
}

func (c *criterion) eval(item, root any) bool {
	if c.op == "" {
		v, found := c.left.value(item, root)
		if c.exists {
			return found && v != nil
		}
		return !found || v == nil
	}
	model, ok := c.left.value(item, root)
	if !ok {
		return false
	}
	expected, ok := c.right.value(item, root)
	if !ok {
		return false
	}
	if c.op == "=~" {
		re, ok := expected.(*regexp.Regexp)
		target := model
		if r, isRe := model.(*regexp.Regexp); isRe {
			re, ok, target = r, true, expected
		}
		if !ok || target == nil {
			return false
		}
		return re.MatchString(scalarString(target))
	}
	cmp, ok := safeCompare(expected, model)
	if !ok {
		return false
	}
	oneNull := (expected == nil) != (model == nil)
	switch c.op {
	case "==":
		return cmp == 0
	case "!=":
		return cmp != 0
	case "<":
		return !oneNull && cmp > 0
	case "<=":
		return !oneNull && cmp >= 0
	case ">":
		return !oneNull && cmp < 0
	case ">=":
		return !oneNull && cmp <= 0
	}
	return false
}

// safeCompare is Jayway 2.0's Criteria.safeCompare(expected, model): nulls (and the string "null")
// first, strings by UTF-16 order, numbers by decimal value, a string against a number as decimals,
// a string against a boolean as Boolean.valueOf. Anything else does not compare (false).
func safeCompare(left, right any) (int, bool) {
	ln, rn := nullish(left), nullish(right)
	switch {
	case ln && rn:
		return 0, true
	case ln:
		return -1, true
	case rn:
		return 1, true
	}
	switch l := left.(type) {
	case string:
		switch r := right.(type) {
		case string:
			if strings.Contains(l, "'") {
				l = strings.ReplaceAll(l, `\'`, "'")
			}
			return compareUTF16(l, r), true
		case int64, float64:
			return compareDecimal(l, r)
		case bool:
			lb := strings.EqualFold(l, "true")
			return compareBool(lb, r), true
		}
	case int64, float64:
		switch right.(type) {
		case int64, float64:
			s, _ := javafmt.Number(l)
			return compareDecimal(s, right)
		}
	case bool:
		if r, ok := right.(bool); ok {
			return compareBool(l, r), true
		}
	}
	return 0, false
}

func nullish(v any) bool {
	if v == nil {
		return true
	}
	s, ok := v.(string)
	return ok && s == "null"
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func compareDecimal(l string, r any) (int, bool) {
	rs, _ := javafmt.Number(r)
	a, ok := new(big.Rat).SetString(strings.TrimSpace(l))
	if !ok {
		return 0, false
	}
	b, ok := new(big.Rat).SetString(rs)
	if !ok {
		return 0, false
	}
	return a.Cmp(b), true
}

// compareUTF16 orders strings as Java's String.compareTo does.
func compareUTF16(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool, nil:
		return javafmt.String(x)
	}
	if s, ok := javafmt.Number(v); ok {
		return s
	}
	return javafmt.JSON(v)
}
