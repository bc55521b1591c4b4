package stack

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sinew/internal/config"
)

// modelIDRE finds Bedrock model and profile ids in prose and code; an id inside an ARN
// (foundation-model/...) or a host name (aws.amazon.com) is not one, hence the character before.
var modelIDRE = regexp.MustCompile(`(?:^|[^\w./-])((?:(?:us-gov|us|eu|apac|jp|au|ca|global)\.)?` +
	`(?:anthropic|amazon|meta|mistral|cohere|ai21|deepseek|openai|qwen|google|writer|moonshot|moonshotai|minimax)` +
	`\.[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*(?::\d+)?)`)

// regionRE finds AWS Region names.
var regionRE = regexp.MustCompile(`\b(?:us-gov|us|eu|ap|ca|sa|me|af|il|mx)-(?:central|north|south|east|west|northeast|northwest|southeast|southwest)-\d\b`)

// docsWithModels are the files whose model ids users copy: the guides, the Makefile's usage, the
// examples, and the messages that show a model id as an example.
func docsWithModels(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md", "infra/cdk/README.md", "internal/config/README.md", "infra/local/README.md", "Makefile", "infra/cdk/stack/settings.go"}
	err := filepath.WalkDir(filepath.Join(root, "infra/examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocsModelExamples: every Bedrock model id the docs, the examples and config's default name
// is one the table knows and can be called where it is shown: with the Region(s) it is paired with
// (on its line, else in its paragraph or code block), or, shown without a Region, it is a profile
// of the model that exists. A model id alone (no profile) must name a Region that serves it on
// demand. So an example cannot again pair a profile-only model, a model past its end of life or
// another geography's profile with a Region.
func TestDocsModelExamples(t *testing.T) {
	root := repoRoot(t)
	var ex []example
	for _, f := range docsWithModels(t, root) {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		ex = append(ex, examples(f, string(raw))...)
	}
	for _, v := range config.Variables() {
		if m, err := config.ParseModel(v.Default); v.Name == config.EnvModel && err == nil && m.Provider == "bedrock" {
			ex = append(ex, example{where: "config's default " + v.Name, id: m.Name})
		}
	}
	if len(ex) < 5 {
		t.Fatalf("found %d model examples; the reader found too few to be reading the docs", len(ex))
	}
	for _, e := range ex {
		if msg := e.problem(); msg != "" {
			t.Errorf("%s: %s", e.where, msg)
		}
	}
}

// example is one model id as shown, with the Regions it is shown with.
type example struct {
	where   string
	id      string
	regions []string
}

func (e example) problem() string {
	if !KnownModel(e.id) {
		return fmt.Sprintf("%s is not in the table of models (bedrock.go): add it, with where Bedrock serves it", e.id)
	}
	prefix, _, isProfile := SplitProfile(e.id)
	if len(e.regions) == 0 && !isProfile {
		return fmt.Sprintf("%s is a model id shown without a Region: show it with a Region that serves it on demand, or show a profile id", e.id)
	}
	regions := e.regions
	if len(regions) == 0 { // a profile alone: check it from a Region of its geography
		i := slices.IndexFunc(sampleRegions, geography(prefix).From)
		regions = sampleRegions[i : i+1]
	}
	for _, r := range regions {
		if p, use := ModelProblem(e.id, r); p != "" {
			return fmt.Sprintf("%s with %s: %s (use %q)", e.id, r, p, use)
		}
	}
	return ""
}

// sampleRegions hold a source Region of every geography.
var sampleRegions = []string{"us-east-1", "eu-west-1", "ap-northeast-1", "ap-southeast-2", "ap-south-1", "ca-central-1", "us-gov-west-1"}

// examples reads the model ids of one file. An id owns the Regions after it on its line up to the
// next id (the first id also those before it); an id whose line gives it none takes the Regions of
// its block's lines that show no id, a block being a paragraph or a fenced code block. A line
// asking get-foundation-model-availability shows no example: that API takes the model's own id.
func examples(file, text string) []example {
	lines := strings.Split(text, "\n")
	var out []example
	for _, b := range blocks(lines) {
		var blockRegions []string
		for _, i := range b {
			if !modelIDRE.MatchString(lines[i]) {
				blockRegions = append(blockRegions, regionRE.FindAllString(lines[i], -1)...)
			}
		}
		for _, i := range b {
			if strings.Contains(lines[i], "get-foundation-model-availability") {
				continue
			}
			ids := modelIDRE.FindAllStringSubmatchIndex(lines[i], -1)
			for k, m := range ids {
				from, to := m[3], len(lines[i])
				if k == 0 {
					from = 0
				}
				if k+1 < len(ids) {
					to = ids[k+1][2]
				}
				regs := regionRE.FindAllString(lines[i][from:to], -1)
				if len(regs) == 0 {
					regs = blockRegions
				}
				out = append(out, example{where: fmt.Sprintf("%s:%d", file, i+1), id: lines[i][m[2]:m[3]], regions: regs})
			}
		}
	}
	return out
}

// blocks groups line numbers into paragraphs (split at blank lines) and fenced code blocks.
func blocks(lines []string) [][]int {
	var out [][]int
	var cur []int
	fenced := false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur = nil
	}
	for i, l := range lines {
		fence := strings.HasPrefix(strings.TrimSpace(l), "```")
		switch {
		case fence && !fenced:
			flush()
			fenced = true
		case fence:
			cur = append(cur, i)
			flush()
			fenced = false
			continue
		case !fenced && strings.TrimSpace(l) == "":
			flush()
			continue
		}
		cur = append(cur, i)
	}
	flush()
	return out
}

// TestExamplesReader holds the reader itself on small texts.
func TestExamplesReader(t *testing.T) {
	const h = "anthropic.claude-haiku-4-5-20251001-v1:0"
	tests := []struct {
		name, text string
		want       []string // "id regions..."
	}{
		{"own line", "SINEW_MODEL=bedrock:us." + h + " for us-east-1", []string{"us." + h + " us-east-1"}},
		{"two on a line", "`us." + h + "` (us-east-1, us-west-2) or `eu." + h + "` (eu-west-1)",
			[]string{"us." + h + " us-east-1 us-west-2", "eu." + h + " eu-west-1"}},
		{"from the block", "```sh\nexport AWS_REGION=eu-west-1\nmake deploy CONTEXT=\"SINEW_MODEL=bedrock:eu." + h + "\"\n```\nus-east-1 elsewhere",
			[]string{"eu." + h + " eu-west-1"}},
		{"paragraphs apart", "AWS_REGION=eu-west-1\n\nbedrock:us." + h, []string{"us." + h}},
		{"not ids", "see https://docs.aws.amazon.com/x and arn:aws:bedrock:*::foundation-model/" + h + " and openai:gpt-4o", nil},
		{"the model's own id asked about", "aws bedrock get-foundation-model-availability --region us-east-1 --model-id " + h, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range examples("f", tt.text) {
				got = append(got, strings.TrimSpace(e.id+" "+strings.Join(e.regions, " ")))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("examples = %q, want %q", got, tt.want)
			}
		})
	}
}
