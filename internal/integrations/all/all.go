// Package all builds the integration registry with every provider sinew ships. Import it where the
// integration Lambda and the catalogue routes start; provider packages never import it.
package all

import (
	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/algolia"
	"sinew/internal/integrations/providers/arxiv"
	awslambda "sinew/internal/integrations/providers/aws_lambda"
	"sinew/internal/integrations/providers/brave"
	"sinew/internal/integrations/providers/browserbase"
	"sinew/internal/integrations/providers/cloudinary"
	"sinew/internal/integrations/providers/dummy"
	"sinew/internal/integrations/providers/email"
	"sinew/internal/integrations/providers/ffmpeg"
	"sinew/internal/integrations/providers/googlesheets"
	"sinew/internal/integrations/providers/llamaparse"
	"sinew/internal/integrations/providers/mailgun"
	"sinew/internal/integrations/providers/mcp"
	remotebrowser "sinew/internal/integrations/providers/remote_browser"
	"sinew/internal/integrations/providers/spider"
	"sinew/internal/integrations/providers/unstructured"
	"sinew/internal/integrations/providers/weather"
	"sinew/internal/integrations/providers/wikipedia"
	"sinew/internal/integrations/schemas"
	"sinew/internal/netguard"
)

// Providers lists every provider, in no particular order (the catalogue sorts by name).
//
// To add a provider: import its package above and append its Provider here. Engineers writing the
// providers that talk to local components (email, ffmpeg, remote_browser, mcp) may edit this file:
// add yours in the block marked below.
func Providers() []*integrations.Provider {
	return []*integrations.Provider{
		// HTTP (SaaS) providers.
		algolia.Provider,
		arxiv.Provider,
		brave.Provider,
		browserbase.Provider,
		cloudinary.Provider,
		dummy.Provider,
		googlesheets.Provider,
		llamaparse.Provider,
		mailgun.Provider,
		spider.Provider,
		unstructured.Provider,
		weather.Provider,
		wikipedia.Provider,

		// Local-component providers (email, ffmpeg, remote_browser, mcp): add them here.
		email.Provider,
		ffmpeg.Provider,
		mcp.Provider,
		remotebrowser.Provider,
		awslambda.Provider,
	}
}

// New builds the registry of every provider, connecting through guard.
func New(guard *netguard.Policy, opts ...integrations.Option) (*integrations.Registry, error) {
	r := integrations.New(guard, opts...)
	if err := r.Register(Providers()...); err != nil {
		return nil, err
	}
	return r, nil
}

// Stored renders the catalogue of every provider as package schemas embeds it (catalogue.json):
// what `go generate ./internal/integrations/schemas` writes and its test compares.
func Stored() ([]byte, error) {
	r, err := New(nil)
	if err != nil {
		return nil, err
	}
	anyMethod := map[string]bool{}
	for _, p := range Providers() {
		anyMethod[p.Name] = p.AnyMethod
	}
	var out []schemas.Stored
	for _, e := range r.Catalogue() {
		out = append(out, schemas.Stored{ProviderEntry: e, AnyMethod: anyMethod[e.Provider]})
	}
	return schemas.Encode(out)
}
