package store

import (
	"context"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/merge"
)

// Redacted stands for a setup value in everything the API answers; written back, it keeps the
// stored value (DESIGN §3.5).
const Redacted = "<redacted>"

// RedactSetup is setup with every value replaced by Redacted: the keys stay visible, so a caller
// can see what is set.
func RedactSetup(setup map[string]any) map[string]any {
	if setup == nil {
		return nil
	}
	out := make(map[string]any, len(setup))
	for k := range setup {
		out[k] = Redacted
	}
	return out
}

// RedactMetadata is metadata with the values under its setup keys redacted, tool by tool.
func RedactMetadata(meta map[string]any) map[string]any {
	if meta == nil {
		return nil
	}
	out := make(map[string]any, len(meta))
	for k, v := range meta {
		out[k] = v
	}
	for _, key := range merge.SetupKeys {
		tools, ok := meta[key].(map[string]any)
		if !ok {
			continue
		}
		red := make(map[string]any, len(tools))
		for name, entry := range tools {
			e, _ := entry.(map[string]any)
			red[name] = RedactSetup(e)
		}
		out[key] = red
	}
	return out
}

// checkMeta checks the shape of the four merge keys: each an object mapping a tool name to an
// object. field is where metadata sits in the request ("metadata").
func checkMeta(field string, meta map[string]any) error {
	for _, key := range append(append([]string{}, merge.ArgsKeys...), merge.SetupKeys...) {
		v, ok := meta[key]
		if !ok || v == nil {
			continue
		}
		tools, ok := v.(map[string]any)
		if !ok {
			return fault.Invalid(field+"."+key, "%s.%s must be an object mapping a tool name to an object", field, key)
		}
		for name, entry := range tools {
			if _, ok := entry.(map[string]any); !ok {
				return fault.Invalid(field+"."+key+"."+name, "%s.%s.%s must be an object", field, key, name)
			}
		}
	}
	return nil
}

func metaEncCtx(dev, owner, key, tool string) map[string]string {
	return map[string]string{"developer": dev, "owner": owner, "tool": tool, "field": key}
}

// sealMeta splits metadata into what is stored visibly (setup values redacted) and the sealed
// setup entries, one per (key, tool), bound to {developer, owner, tool, field}. A value written as
// Redacted keeps the value stored under old for the same key, tool and setting.
func (s *Store) sealMeta(ctx context.Context, dev, owner string, meta map[string]any, old map[string][]byte) (map[string]any, map[string][]byte, error) {
	if err := checkMeta("metadata", meta); err != nil {
		return nil, nil, err
	}
	meta = cloneMap(meta) // the caller's value stays as it was
	sealed := map[string][]byte{}
	for _, key := range merge.SetupKeys {
		tools, _ := meta[key].(map[string]any)
		for name, entry := range tools {
			e := entry.(map[string]any)
			var prev map[string]any
			for k, v := range e {
				if v != Redacted {
					continue
				}
				if prev == nil {
					var err error
					if prev, err = s.openEntry(ctx, dev, owner, key, name, old); err != nil {
						return nil, nil, err
					}
				}
				pv, ok := prev[k]
				if !ok {
					return nil, nil, fault.Invalid("metadata."+key+"."+name+"."+k,
						"metadata.%s.%s.%s is %q but nothing is stored under it: give the value", key, name, k, Redacted)
				}
				e[k] = pv
			}
			pt, err := jsonv.Encode(e)
			if err != nil {
				return nil, nil, fault.Wrap(fault.InvalidInput, err, "metadata.%s.%s cannot be written as JSON", key, name)
			}
			b, err := s.sealer.Seal(ctx, metaEncCtx(dev, owner, key, name), pt)
			if err != nil {
				return nil, nil, wrapf(err, "seal metadata.%s.%s", key, name)
			}
			sealed[key+"/"+name] = b
		}
	}
	return RedactMetadata(meta), sealed, nil
}

// openEntry opens the sealed entry of one tool under key; nil when there is none.
func (s *Store) openEntry(ctx context.Context, dev, owner, key, tool string, sealed map[string][]byte) (map[string]any, error) {
	b, ok := sealed[key+"/"+tool]
	if !ok {
		return nil, nil
	}
	return s.openJSON(ctx, metaEncCtx(dev, owner, key, tool), b, "metadata."+key+"."+tool)
}

func (s *Store) openJSON(ctx context.Context, encCtx map[string]string, b []byte, what string) (map[string]any, error) {
	pt, err := s.sealer.Open(ctx, encCtx, b)
	if err != nil {
		return nil, wrapf(err, "open %s", what)
	}
	v, err := jsonv.Decode(pt)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, fault.New(fault.Internal, "stored %s is not a JSON object", what)
	}
	return m, nil
}

// cloneMap deep-copies a JSON object so a caller's value is never changed by a write.
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return jsonv.Clone(m).(map[string]any)
}
