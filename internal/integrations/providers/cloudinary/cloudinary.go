// Package cloudinary is the cloudinary integration. media_edit (the default, as in
// Julep) builds a delivery URL that applies transformations to an uploaded asset, as the Python
// SDK's cloudinary_url does, and can download the result; media_upload uploads a file (a URL or a
// data: URI) through the signed Upload API (POST /v1_1/<cloud>/<resource_type>/upload, SHA-1
// signature of the sorted parameters and the API secret).
//
// The upload output keeps the service's field name meta_data (the typespec says metadata) and drops
// api_key from it (the API echoes it; sinew never returns setup values). A file that is neither a URL
// nor a data: URI is refused (the Python SDK would read a path on the service host). Downloads
// (return_base64) go through the guard. The API base is SINEW_CLOUDINARY_BASE_URL (default
// https://api.cloudinary.com) and the delivery base SINEW_CLOUDINARY_DELIVERY_URL (default
// https://res.cloudinary.com). 420 (Cloudinary's rate limit) is transient.
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/cloudinary.py
package cloudinary

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// maxDownload bounds a downloaded asset.
const maxDownload = 50 << 20

// Setup of the cloudinary provider.
type Setup struct {
	APIKey    string         `json:"cloudinary_api_key" jsonschema:"minLength=1" sinew:"secret"`
	APISecret string         `json:"cloudinary_api_secret" jsonschema:"minLength=1" sinew:"secret"`
	CloudName string         `json:"cloudinary_cloud_name" jsonschema:"pattern=^[A-Za-z0-9_-]+$" sinew:"endpoint"`
	Params    map[string]any `json:"params,omitempty" jsonschema_description:"Other configuration: signature_algorithm (sha1, the default, or sha256)."`
}

// UploadArguments of media_upload.
type UploadArguments struct {
	File         string         `json:"file" jsonschema:"minLength=1" jsonschema_description:"The file: an http(s) URL or a data: URI."`
	ReturnBase64 bool           `json:"return_base64,omitempty" jsonschema:"default=false" jsonschema_description:"Also return the uploaded file, base64-encoded."`
	PublicID     string         `json:"public_id,omitempty" jsonschema_description:"The asset's public id (default: a random UUID)."`
	UploadParams map[string]any `json:"upload_params,omitempty" jsonschema_description:"Other Upload API parameters (folder, tags, resource_type, ...)."`
}

// UploadOutput of media_upload.
type UploadOutput struct {
	URL      string         `json:"url"`
	PublicID string         `json:"public_id"`
	MetaData map[string]any `json:"meta_data"`
	Base64   *string        `json:"base64,omitempty"`
}

// EditArguments of media_edit.
type EditArguments struct {
	PublicID       string           `json:"public_id" jsonschema:"minLength=1"`
	Transformation []map[string]any `json:"transformation" jsonschema_description:"Transformations, e.g. [{\"width\": 300, \"crop\": \"scale\"}]."`
	ReturnBase64   bool             `json:"return_base64,omitempty" jsonschema:"default=false"`
}

// EditOutput of media_edit.
type EditOutput struct {
	TransformedURL string  `json:"transformed_url"`
	Base64         *string `json:"base64,omitempty"`
}

// shortNames are the SDK's transformation parameter abbreviations.
var shortNames = map[string]string{
	"angle": "a", "aspect_ratio": "ar", "audio_codec": "ac", "audio_frequency": "af", "background": "b", "bit_rate": "br",
	"border": "bo", "color": "co", "color_space": "cs", "crop": "c", "default_image": "d", "delay": "dl", "density": "dn",
	"dpr": "dpr", "duration": "du", "effect": "e", "end_offset": "eo", "fetch_format": "f", "flags": "fl", "fps": "fps",
	"gravity": "g", "height": "h", "opacity": "o", "overlay": "l", "page": "pg", "prefix": "p", "quality": "q",
	"radius": "r", "start_offset": "so", "underlay": "u", "video_codec": "vc", "width": "w", "x": "x", "y": "y", "zoom": "z",
}

var versionRE = regexp.MustCompile(`^v[0-9]+/`)

// transformationString renders the transformations as the SDK does: each one's parameters as
// short_value pairs, sorted and comma-joined, raw_transformation last; components joined by "/".
func transformationString(ts []map[string]any) (string, error) {
	parts := make([]string, 0, len(ts))
	for i, t := range ts {
		var kv []string
		raw := ""
		for k, v := range t {
			if k == "raw_transformation" {
				raw = fmt.Sprint(v)
				continue
			}
			short, ok := shortNames[k]
			if !ok {
				return "", fault.Invalid(fmt.Sprintf("arguments.transformation[%d].%s", i, k), "arguments.transformation[%d].%s is not a known transformation parameter", i, k)
			}
			val, err := paramValue(v)
			if err != nil {
				return "", fault.Invalid(fmt.Sprintf("arguments.transformation[%d].%s", i, k), "arguments.transformation[%d].%s must be a string, number or list", i, k)
			}
			if val == "" {
				continue
			}
			kv = append(kv, short+"_"+val)
		}
		sort.Strings(kv)
		if raw != "" {
			kv = append(kv, raw)
		}
		if len(kv) > 0 {
			parts = append(parts, strings.Join(kv, ","))
		}
	}
	return strings.Join(parts, "/"), nil
}

func paramValue(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case []any:
		vs := make([]string, 0, len(x))
		for _, e := range x {
			s, err := paramValue(e)
			if err != nil {
				return "", err
			}
			vs = append(vs, s)
		}
		return strings.Join(vs, "."), nil
	}
	return "", fmt.Errorf("unsupported value %T", v)
}

func download(ctx context.Context, env integrations.Env, u string) (*string, error) {
	resp, err := env.Do(ctx, integrations.Request{URL: u, Header: map[string][]string{"Accept": {"*/*"}}, MaxBytes: maxDownload})
	if err != nil {
		return nil, err
	}
	b := base64.StdEncoding.EncodeToString(resp.Body)
	return &b, nil
}

func mediaEdit(ctx context.Context, env integrations.Env, s Setup, a EditArguments) (EditOutput, error) {
	tr, err := transformationString(a.Transformation)
	if err != nil {
		return EditOutput{}, err
	}
	id := a.PublicID
	if strings.Contains(id, "/") && !versionRE.MatchString(id) {
		id = "v1/" + id // the SDK's force_version for ids in folders
	}
	path := []string{s.CloudName, "image", "upload"}
	if tr != "" {
		path = append(path, tr)
	}
	u := env.Endpoint("DELIVERY_URL", "https://res.cloudinary.com") + "/" + strings.Join(path, "/") + "/" + id
	out := EditOutput{TransformedURL: u}
	if a.ReturnBase64 {
		if out.Base64, err = download(ctx, env, u); err != nil {
			return EditOutput{}, err
		}
	}
	return out, nil
}

// sign is the Upload API signature: the parameters (without file, cloud_name, resource_type and
// api_key) as sorted k=v pairs joined by &, followed by the secret, hashed.
func sign(params map[string]string, secret, algorithm string) string {
	keys := make([]string, 0, len(params))
	for k, v := range params {
		switch k {
		case "file", "cloud_name", "resource_type", "api_key":
			continue
		}
		if v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + params[k]
	}
	data := strings.Join(pairs, "&") + secret
	if algorithm == "sha256" {
		h := sha256.Sum256([]byte(data))
		return hex.EncodeToString(h[:])
	}
	h := sha1.Sum([]byte(data))
	return hex.EncodeToString(h[:])
}

func uploadValue(v any) (string, error) {
	switch x := v.(type) {
	case []any:
		vs := make([]string, 0, len(x))
		for _, e := range x {
			s, err := uploadValue(e)
			if err != nil {
				return "", err
			}
			vs = append(vs, s)
		}
		return strings.Join(vs, ","), nil
	case map[string]any:
		b, err := json.Marshal(x)
		return string(b), err
	}
	return paramValue(v)
}

func mediaUpload(ctx context.Context, env integrations.Env, s Setup, a UploadArguments) (UploadOutput, error) {
	lower := strings.ToLower(a.File)
	if !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "data:") {
		return UploadOutput{}, fault.Invalid("arguments.file", "arguments.file must be an http(s) URL or a data: URI")
	}
	resourceType := "image"
	params := map[string]string{}
	for k, v := range a.UploadParams {
		val, err := uploadValue(v)
		if err != nil {
			return UploadOutput{}, fault.Invalid("arguments.upload_params."+k, "arguments.upload_params.%s cannot be sent", k)
		}
		if k == "resource_type" {
			if val != "" {
				resourceType = val
			}
			continue
		}
		params[k] = val
	}
	switch resourceType {
	case "image", "video", "raw", "auto":
	default:
		return UploadOutput{}, fault.Invalid("arguments.upload_params.resource_type", "resource_type must be image, video, raw or auto")
	}
	params["public_id"] = a.PublicID
	if params["public_id"] == "" {
		params["public_id"] = uuid.NewString()
	}
	params["timestamp"] = strconv.FormatInt(time.Now().Unix(), 10)
	algorithm, _ := s.Params["signature_algorithm"].(string)
	params["signature"] = sign(params, s.APISecret, algorithm)
	params["api_key"] = s.APIKey

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		_ = mw.WriteField(k, params[k])
	}
	_ = mw.WriteField("file", a.File)
	if err := mw.Close(); err != nil {
		return UploadOutput{}, fault.Wrap(fault.Internal, err, "could not build the upload")
	}
	var res map[string]any
	err := env.DoJSON(ctx, integrations.Request{
		Method:      "POST",
		URL:         integrations.JoinURL(env.BaseURL, "v1_1", s.CloudName, resourceType, "upload"),
		Body:        body.Bytes(),
		ContentType: mw.FormDataContentType(),
	}, &res)
	if err != nil {
		if integrations.StatusOf(err) == 420 {
			return UploadOutput{}, fault.Wrap(fault.Transient, err, "Cloudinary's rate limit was reached (HTTP 420); the call will be retried")
		}
		return UploadOutput{}, err
	}
	secureURL, _ := res["secure_url"].(string)
	publicID, _ := res["public_id"].(string)
	if secureURL == "" {
		return UploadOutput{}, fault.New(fault.Provider, "Cloudinary's upload answer has no secure_url")
	}
	meta := map[string]any{}
	for k, v := range res {
		switch k {
		case "secure_url", "public_id", "api_key":
			continue
		}
		meta[k] = v
	}
	out := UploadOutput{URL: secureURL, PublicID: publicID, MetaData: meta}
	if a.ReturnBase64 {
		if out.Base64, err = download(ctx, env, secureURL); err != nil {
			return UploadOutput{}, err
		}
	}
	return out, nil
}

// Provider is the cloudinary provider.
var Provider = &integrations.Provider{
	Name:         "cloudinary",
	FriendlyName: "Cloudinary",
	URL:          "https://cloudinary.com/",
	Docs:         "https://cloudinary.com/documentation/image_upload_api_reference",
	Icon:         "https://cloudinary.com/favicon.ico",
	BaseURL:      "https://api.cloudinary.com",
	Methods: []*integrations.Method{
		integrations.NewMethod("media_edit", "Edit media in Cloudinary", mediaEdit),
		integrations.NewMethod("media_upload", "Upload media to Cloudinary", mediaUpload),
	},
}
