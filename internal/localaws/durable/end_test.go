package durable

import (
	"fmt"
	"testing"
)

// endFixture is a recorder journaling execution "x" with one token, beside other executions'
// tokens, as many as others.
func endFixture(others int) *Recorder {
	r := NewRecorder(nil, nil, nil, nil)
	for i := range others {
		arn, tok := fmt.Sprintf("other-%d", i), fmt.Sprintf("tok-other-%d", i)
		r.execs[arn] = &execState{j: &Journal{}, tokens: []string{tok}}
		r.tokens[tok] = tokenRef{exec: arn, key: "k"}
	}
	r.execs["x"] = &execState{j: &Journal{}, tokens: []string{"tok-x"}}
	r.tokens["tok-x"] = tokenRef{exec: "x", key: "k"}
	return r
}

func BenchmarkRecorderEnd(b *testing.B) {
	for _, others := range []int{0, 10000} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			r := endFixture(others)
			for b.Loop() {
				r.execs["x"] = &execState{j: &Journal{}, tokens: []string{"tok-x"}}
				r.tokens["tok-x"] = tokenRef{exec: "x", key: "k"}
				r.End("x")
			}
		})
	}
}

func TestEndDropsOnlyItsTokens(t *testing.T) {
	r := endFixture(3)
	r.mu.Lock()
	r.addToken("x", r.execs["x"], "tok-x2", "k2")
	r.mu.Unlock()
	r.End("x")
	for _, tok := range []string{"tok-x", "tok-x2"} {
		if _, ok := r.tokens[tok]; ok {
			t.Errorf("%s is still mapped after x ended", tok)
		}
	}
	for i := range 3 {
		if ref := r.tokens[fmt.Sprintf("tok-other-%d", i)]; ref.exec != fmt.Sprintf("other-%d", i) {
			t.Errorf("other-%d's token was dropped or changed: %+v", i, ref)
		}
	}
	if _, ok := r.execs["x"]; ok {
		t.Error("x is still journaled after its end")
	}
}
