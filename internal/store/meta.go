package store

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/merge"
)

// Redacted stands for a setup value in everything the API answers; written back, it keeps the
// stored value.
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

// Setup is sealed value by value: each setting of a tool's setup entry is its own
// blob, bound to {developer, owner, tool, field, key}. A value written back as Redacted then keeps
// its old blob byte for byte, so no write ever has to open anything: only the executors, which
// hold Decrypt on the key, open setup (through MergeSources).

// metaEncCtx binds the sealed value of setting k of tool's entry under key (x-integration-setup or
// x-api_call-setup) to its developer and owner.
func metaEncCtx(dev, owner, key, tool, k string) map[string]string {
	return map[string]string{"developer": dev, "owner": owner, "tool": tool, "field": key, "key": k}
}

// metaEntry is the name, in an item's sealed map, of setting k of tool's entry under key. Neither a
// setup key nor a tool name holds a "/", so the setting name is everything after the second one.
func metaEntry(key, tool, k string) string { return key + "/" + tool + "/" + k }

// splitMetaEntry undoes metaEntry.
func splitMetaEntry(entry string) (key, tool, k string, ok bool) {
	key, rest, ok1 := strings.Cut(entry, "/")
	tool, k, ok2 := strings.Cut(rest, "/")
	return key, tool, k, ok1 && ok2 && key != "" && tool != ""
}

// sealJob is one setup value to seal, or to keep as the blob old already holds.
type sealJob struct {
	encCtx map[string]string
	value  any
	what   string
}

// sealSetup seals each value of setup (one tool's entry) into out under entry(k): a value written
// as Redacted keeps the blob old holds under the same entry (never opened), a new value is sealed
// alone, a key left out is dropped. field names the entry in error messages ("metadata.x.y").
func (s *Store) sealSetup(ctx context.Context, setup map[string]any, old, out map[string][]byte,
	entry func(k string) string, encCtx func(k string) map[string]string, field string) error {
	var jobs []sealJob
	var names []string
	for k, v := range setup {
		if v == Redacted {
			b, ok := old[entry(k)]
			if !ok {
				return fault.Invalid(field+"."+k, "%s.%s is %q but nothing is stored under it: give the value", field, k, Redacted)
			}
			out[entry(k)] = b
			continue
		}
		jobs = append(jobs, sealJob{encCtx: encCtx(k), value: v, what: field + "." + k})
		names = append(names, entry(k))
	}
	blobs, err := parallel(ctx, jobs, func(ctx context.Context, j sealJob) ([]byte, error) {
		pt, err := jsonv.Encode(j.value)
		if err != nil {
			return nil, fault.Wrap(fault.InvalidInput, err, "%s cannot be written as JSON", j.what)
		}
		blob, err := s.sealer.Seal(ctx, j.encCtx, pt)
		if err != nil {
			return nil, wrapf(err, "seal %s", j.what)
		}
		return blob, nil
	})
	if err != nil {
		return err
	}
	for i, n := range names {
		out[n] = blobs[i]
	}
	return nil
}

// sealMeta splits metadata into what is stored visibly (setup values redacted, so the keys of every
// entry stay in the record) and the sealed setup values, one per (key, tool, setting). old is the
// stored record's sealed map (nil when creating): a value written as Redacted keeps its blob.
func (s *Store) sealMeta(ctx context.Context, dev, owner string, meta map[string]any, old map[string][]byte) (map[string]any, map[string][]byte, error) {
	if err := checkMeta("metadata", meta); err != nil {
		return nil, nil, err
	}
	sealed := map[string][]byte{}
	for _, key := range merge.SetupKeys {
		tools, _ := meta[key].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(tools)) { // the first fault found is always the same one
			err := s.sealSetup(ctx, tools[name].(map[string]any), old, sealed,
				func(k string) string { return metaEntry(key, name, k) },
				func(k string) map[string]string { return metaEncCtx(dev, owner, key, name, k) },
				"metadata."+key+"."+name)
			if err != nil {
				return nil, nil, err
			}
		}
	}
	return RedactMetadata(meta), sealed, nil
}

// openJob is one sealed value to open into dst[k].
type openJob struct {
	encCtx map[string]string
	blob   []byte
	dst    map[string]any
	k      string
	what   string
}

// openAll opens every job's blob into its destination, a few at a time (each is a KMS Decrypt).
func (s *Store) openAll(ctx context.Context, jobs []openJob) error {
	vals, err := parallel(ctx, jobs, func(ctx context.Context, j openJob) (any, error) {
		pt, err := s.sealer.Open(ctx, j.encCtx, j.blob)
		if err != nil {
			return nil, wrapf(err, "open %s", j.what)
		}
		v, err := jsonv.Decode(pt)
		if err != nil {
			return nil, fault.New(fault.Internal, "stored %s is not JSON", j.what)
		}
		return v, nil
	})
	if err != nil {
		return err
	}
	for i, j := range jobs {
		j.dst[j.k] = vals[i]
	}
	return nil
}

// maxParallel bounds the KMS requests one store call has in flight.
const maxParallel = 8

// parallel answers f of each job, at most maxParallel at a time, or the first error (by index, so
// the answer does not depend on timing). It is generic over the job, so sealing and opening are
// instances apart: a call graph of the code that only opens does not reach Seal through it.
func parallel[J, R any](ctx context.Context, jobs []J, f func(context.Context, J) (R, error)) ([]R, error) {
	out := make([]R, len(jobs))
	if len(jobs) == 1 {
		var err error
		out[0], err = f(ctx, jobs[0])
		return out, err
	}
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = f(ctx, j)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cloneMap deep-copies a JSON object so a caller's value is never changed by a write.
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return jsonv.Clone(m).(map[string]any)
}
