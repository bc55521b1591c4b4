package main

import "testing"

func TestParseBench(t *testing.T) {
	out := "goos: linux\n" +
		"BenchmarkA-2   \t 100\t  2000 ns/op\t  5.5 executions/s\t 12 B/op\n" +
		"BenchmarkA-2   \t 100\t  4000 ns/op\t  6.5 executions/s\t 12 B/op\n" +
		"BenchmarkT/ask_user-2 \t2026/12/02 INFO a log line\n" +
		"2026/12/02 INFO another\n" +
		"       3\t  95371226 ns/op\t  7.000 ddb-requests/call\n" +
		"PASS\n"
	res := parseBench([]byte(out))
	tests := []struct {
		name, unit string
		median     float64
		n          int
	}{
		{"BenchmarkA", "ns/op", 3000, 2},
		{"BenchmarkA", "executions/s", 6, 2},
		{"BenchmarkT/ask_user", "ddb-requests/call", 7, 1},
		{"BenchmarkT/ask_user", "ns/op", 95371226, 1},
	}
	for _, tt := range tests {
		s := res.get(tt.name, tt.unit)
		if len(s) != tt.n || s.median() != tt.median {
			t.Errorf("%s %s = %v (median %v), want %d samples, median %v", tt.name, tt.unit, s, s.median(), tt.n, tt.median)
		}
	}
}

func TestSamples(t *testing.T) {
	tests := []struct {
		s           samples
		med, lo, hi float64
	}{
		{nil, 0, 0, 0},
		{samples{3, 1, 2}, 2, 1, 3},
		{samples{4, 1, 2, 3}, 2.5, 1, 4},
	}
	for _, tt := range tests {
		lo, hi := tt.s.spread()
		if tt.s.median() != tt.med || lo != tt.lo || hi != tt.hi {
			t.Errorf("%v: median %v spread %v–%v, want %v %v–%v", tt.s, tt.s.median(), lo, hi, tt.med, tt.lo, tt.hi)
		}
	}
}

func TestSplitComma(t *testing.T) {
	got := splitComma("a,,b,")
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("splitComma = %q", got)
	}
}
