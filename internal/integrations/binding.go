package integrations

import (
	"fmt"
	"reflect"
	"strings"

	"sinew/internal/merge"
)

// A provider's setup type declares, with a `sinew` tag on a field, which setup keys name where a
// call is sent and which carry credentials:
//
//	APIKey string `json:"api_key" sinew:"secret"`
//	APIURL string `json:"api_url,omitempty" sinew:"endpoint"`
//
// The executor refuses a merged setup whose endpoint comes from a higher layer than a secret
// (merge.CheckBinding): a secret goes only to the endpoint named where it was set up. Every setup
// field that names a host or URL must be tagged endpoint (TestSetupEndpointsDeclared checks the
// names of the registered providers' fields).
const (
	TagEndpoint = "endpoint"
	TagSecret   = "secret"
)

// bindingOf reads the `sinew` tags of a setup struct (a map setup declares nothing).
func bindingOf(t reflect.Type) (merge.Binding, error) {
	var b merge.Binding
	if t.Kind() != reflect.Struct {
		return b, nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("sinew")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			return b, fmt.Errorf("field %s has a sinew tag but no JSON name", f.Name)
		}
		switch tag {
		case TagEndpoint:
			b.Endpoints = append(b.Endpoints, name)
		case TagSecret:
			b.Secrets = append(b.Secrets, name)
		default:
			return b, fmt.Errorf("field %s: sinew tag %q is neither %q nor %q", f.Name, tag, TagEndpoint, TagSecret)
		}
	}
	return b, nil
}

// SetupBinding is what the provider's setup type declares of its keys (empty for an unknown
// provider or one without setup).
func (r *Registry) SetupBinding(provider string) merge.Binding {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.providers[provider]; e != nil {
		return e.binding
	}
	return merge.Binding{}
}
