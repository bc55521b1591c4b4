package stack

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Which Bedrock model ids can be called from which Region, as far as a deployment needs to know:
// the one table that the grants, the deploy preflight (infra/cdk/preflight) and the test of the
// docs' examples read. A model missing here is not checked. Sources: each model's card and
// https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html (profiles),
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-lifecycle-legacy.html (end of life).

// Geography is the prefix of Bedrock's system-defined cross-Region inference profiles of one
// geography and the Regions such a profile can be called from (its source Regions), taken as the
// geography's Regions as a whole: one of them may still offer no profile of a given model, which
// only `aws bedrock list-inference-profiles` in that Region tells.
type Geography struct {
	Prefix string
	Where  string // the source Regions, for messages
	From   func(region string) bool
}

// Geographies, the most specific first: the first one a model has whose sources hold the Region is
// the profile suggested (jp. before apac. in Tokyo), and global. comes last because it sends the
// requests out of the geography.
var Geographies = []Geography{
	{"us-gov", "us-gov-*", func(r string) bool { return strings.HasPrefix(r, "us-gov-") }},
	{"jp", "ap-northeast-1, ap-northeast-3", func(r string) bool { return r == "ap-northeast-1" || r == "ap-northeast-3" }},
	{"au", "ap-southeast-2, ap-southeast-4", func(r string) bool { return r == "ap-southeast-2" || r == "ap-southeast-4" }},
	{"ca", "ca-*", func(r string) bool { return strings.HasPrefix(r, "ca-") }},
	{"us", "us-east-1, us-east-2, us-west-1, us-west-2", func(r string) bool { return strings.HasPrefix(r, "us-") && !strings.HasPrefix(r, "us-gov-") }},
	{"eu", "eu-*", func(r string) bool { return strings.HasPrefix(r, "eu-") }},
	{"apac", "ap-*", func(r string) bool { return strings.HasPrefix(r, "ap-") }},
	{"global", "commercial Regions", func(r string) bool {
		return commercialRE.MatchString(r) && !strings.HasPrefix(r, "us-gov-") && !strings.HasPrefix(r, "cn-")
	}},
}

// commercialRE is a Region's shape (us-east-1); the sovereign partitions' prefixes differ.
var commercialRE = regexp.MustCompile(`^[a-z]{2}-[a-z]+-\d+$`)

// BedrockModel is one foundation model: where its id is served on demand, which profiles carry it,
// and whether it has ended.
type BedrockModel struct {
	ID        string   // the foundation model's id
	OnDemand  []string // Regions that serve ID itself on demand; none: only through a profile
	Profiles  []string // the prefixes (Geographies) of its system-defined profiles
	EndOfLife string   // the day Bedrock stopped serving it outside OnDemand; "" while it is served
	Successor string   // the model to move to once it has ended
}

// haiku45 is the current model the docs' examples and the default name.
const haiku45 = "anthropic.claude-haiku-4-5-20251001-v1:0"

// bedrockModels: Claude Haiku 4.5 is served through profiles only, in no Region by its id. Claude
// 3.5 Haiku ended on 2026-06-19, Claude 3 Haiku on 2026-09-10 everywhere but the four Regions
// named; an ended model answers ResourceNotFoundException ("reached the end of its life").
var bedrockModels = []BedrockModel{
	{ID: haiku45, Profiles: []string{"us", "eu", "apac", "jp", "au", "global"}},
	{ID: "anthropic.claude-3-5-haiku-20241022-v1:0", EndOfLife: "2026-06-19", Successor: haiku45},
	{ID: "anthropic.claude-3-haiku-20240307-v1:0", OnDemand: []string{"ap-northeast-2", "ca-central-1", "eu-central-2", "sa-east-1"},
		EndOfLife: "2026-09-10", Successor: haiku45},
}

// SplitProfile splits a system-defined inference profile's id (eu.anthropic.claude-...) into its
// geography's prefix and its model's id; ok is false for a model id.
func SplitProfile(id string) (prefix, model string, ok bool) {
	p, rest, found := strings.Cut(id, ".")
	if !found || !slices.ContainsFunc(Geographies, func(g Geography) bool { return g.Prefix == p }) {
		return "", id, false
	}
	return p, rest, true
}

// KnownModel reports whether the table knows the model id names (itself or through a profile).
func KnownModel(id string) bool {
	_, m, _ := SplitProfile(id)
	_, ok := lookupModel(m)
	return ok
}

func lookupModel(id string) (BedrockModel, bool) {
	i := slices.IndexFunc(bedrockModels, func(m BedrockModel) bool { return m.ID == id })
	if i < 0 {
		return BedrockModel{}, false
	}
	return bedrockModels[i], true
}

func geography(prefix string) Geography {
	return Geographies[slices.IndexFunc(Geographies, func(g Geography) bool { return g.Prefix == prefix })]
}

// ModelProblem says why id (a model id or a profile's) cannot be called from region, and use is
// the id to call instead there ("" when there is none, or the table does not know the model).
// problem is "" when id can be called, or when the table does not know the model.
func ModelProblem(id, region string) (problem, use string) {
	prefix, name, isProfile := SplitProfile(id)
	m, known := lookupModel(name)
	if isProfile {
		g := geography(prefix)
		switch {
		case !g.From(region):
			return fmt.Sprintf("%s is Bedrock's %s. inference profile, which is called from %s, not from %s", id, prefix, g.Where, region), instead(name, region)
		case known && m.EndOfLife != "":
			return fmt.Sprintf("%s reached its end of life on Bedrock on %s", name, m.EndOfLife), instead(m.Successor, region)
		case known && !slices.Contains(m.Profiles, prefix):
			return fmt.Sprintf("Bedrock has no %s. inference profile of %s (it has %s.)", prefix, name, strings.Join(m.Profiles, "., ")), instead(name, region)
		}
		return "", ""
	}
	switch {
	case !known || slices.Contains(m.OnDemand, region):
		return "", ""
	case m.EndOfLife != "":
		where := "no Region"
		if len(m.OnDemand) > 0 {
			where = strings.Join(m.OnDemand, ", ")
		}
		return fmt.Sprintf("%s reached its end of life on Bedrock on %s (it is still served on demand in %s only)", id, m.EndOfLife, where), instead(m.Successor, region)
	}
	return fmt.Sprintf("Bedrock serves %s only through an inference profile, not on demand in %s", id, region), instead(id, region)
}

// instead is the id to call model by from region: itself where it is on demand, else its most
// specific profile whose sources hold the Region; "" when there is none or the model is unknown.
func instead(model, region string) string {
	m, ok := lookupModel(model)
	if !ok {
		return ""
	}
	if slices.Contains(m.OnDemand, region) {
		return model
	}
	for _, g := range Geographies {
		if slices.Contains(m.Profiles, g.Prefix) && g.From(region) {
			return g.Prefix + "." + model
		}
	}
	return ""
}
