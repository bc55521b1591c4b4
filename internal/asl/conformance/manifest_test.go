package conformance

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	"sinew/internal/asl"
)

// TestManifest replays every recorded execution of the manifest. It fails when a case on the
// committed pass list (passing.txt) stops passing, or when the manifest and the committed usable set
// (usable.txt) disagree, so the denominator cannot drift; usable cases that pass but are not yet on
// the pass list are logged so the list can grow (go run ./internal/asl/conformance/cmd/conformance
// -write-passing).
func TestManifest(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := Root(wd)
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	usable, passing := KeyList("usable"), KeyList("passing")
	for k := range passing {
		if !usable[k] {
			t.Errorf("passing.txt lists %s, which is not in usable.txt", k)
		}
	}
	seen := map[string]bool{}
	var newly []string
	pass := 0
	for i := range m.Cases {
		c := &m.Cases[i]
		for _, r := range c.Run(context.Background(), root) {
			if seen[r.Key] {
				t.Errorf("manifest produces %s twice", r.Key)
			}
			seen[r.Key] = true
			if !usable[r.Key] {
				t.Errorf("manifest produces %s, which is not in usable.txt (the usable set is fixed; add it deliberately)", r.Key)
				continue
			}
			switch {
			case r.Passed():
				pass++
				if !passing[r.Key] {
					newly = append(newly, r.Key)
				}
			case passing[r.Key]:
				t.Errorf("%s stopped passing: %s", r.Key, r.Why())
				for _, d := range r.Diffs[min(1, len(r.Diffs)):] {
					t.Log(d)
				}
			}
		}
	}
	var missing []string
	for k := range usable {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	for _, k := range missing {
		t.Errorf("usable.txt lists %s, which the manifest no longer produces", k)
	}
	sort.Strings(newly)
	for _, k := range newly {
		t.Logf("newly passing (add to passing.txt): %s", k)
	}
	t.Logf("conformance: %d of %d usable recorded executions pass (%d on the pass list)", pass, len(usable), len(passing))
}

// TestGlobalTimeout: the recorded test_global_timeout kept only DescribeExecution (TIMED_OUT), so it
// is not a history case of the manifest.
func TestGlobalTimeout(t *testing.T) {
	m, err := asl.Parse([]byte(`{"StartAt":"W","TimeoutSeconds":5,"States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`), asl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Unix(0, 0))})
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: m})
	if err != nil {
		t.Fatal(err)
	}
	d, err := x.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != asl.StatusTimedOut {
		t.Fatalf("status %s, want %s", d.Status, asl.StatusTimedOut)
	}
}
