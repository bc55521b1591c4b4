package ffmpeg

import (
	"context"

	"github.com/invopop/jsonschema"

	"sinew/internal/integrations"
)

// Provider is the ffmpeg provider for the registry. It takes no setup.
var Provider = &integrations.Provider{
	Name:         "ffmpeg",
	FriendlyName: "FFmpeg",
	URL:          "https://ffmpeg.org",
	Docs:         "https://ffmpeg.org/ffmpeg.html",
	Methods: []*integrations.Method{
		integrations.NewMethod("bash_cmd", "Run ffmpeg on the given files with an argument vector (no shell): the k-th `-i NAME` reads the k-th file, the last argument names the output file, returned in base64. Only everyday options, filters, formats and encoders are accepted (no filter that opens files, such as movie or subtitles).", bashCmd),
	},
}

// bashCmd adapts BashCmd to the registry: the binary is SINEW_FFMPEG_PATH (in AWS, the layer's),
// else ffmpeg on PATH.
func bashCmd(ctx context.Context, ienv integrations.Env, _ integrations.NoSetup, args BashCmdArguments) (BashCmdOutput, error) {
	return BashCmd(ctx, Env{Path: ienv.Endpoint("PATH", ""), Log: ienv.Log}, args)
}

// JSONSchema describes Files as Julep's file argument: one base64 string, or an array of them.
func (Files) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Description: "input files in base64, one per -i, in order: one string or an array of strings",
		OneOf: []*jsonschema.Schema{
			{Type: "string"},
			{Type: "array", Items: &jsonschema.Schema{Type: "string"}},
		},
	}
}
