package ffmpeg

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"sinew/internal/fault"
)

// An option sinew passes on to ffmpeg: whether it takes a value, whether it may carry a stream
// specifier (-c:v, -b:a:0), and what its value must look like. Everything not listed is refused:
// ffmpeg also accepts every private option of every demuxer, muxer and codec on its command line
// (-safe, -allowed_extensions, -x264-params stats=..., -hls_key_info_file), and a deny-list cannot
// keep up with them.
type option struct {
	value     bool
	perStream bool
	check     func(string) error // beyond checkWord; nil for none
}

var (
	simpleRE   = lazyRE(`^[A-Za-z0-9_.:+/\-]{1,64}$`)
	numberRE   = lazyRE(`^-?[0-9]+(\.[0-9]+)?[kKmMgG]?$`)
	mapRE      = lazyRE(`^(-?[0-9]+(:[A-Za-z0-9:?#]+)?\??|\[[A-Za-z0-9_]+\])$`)
	specRE     = lazyRE(`^[A-Za-z0-9:#]{0,32}$`)
	flagsRE    = lazyRE(`^[+\-]?[a-z_]+([+\-][a-z_]+)*$`)
	metadataRE = lazyRE(`^[A-Za-z0-9_\-]{1,64}=`)
)

// lazyRE compiles expr on first use: the provider's package init stays cheap for a Lambda that
// never runs ffmpeg (compiling these at init cost its cold start milliseconds).
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func like(re func() *regexp.Regexp, what string) func(string) error {
	return func(v string) error {
		if !re().MatchString(v) {
			return fmt.Errorf("%q is not %s", v, what)
		}
		return nil
	}
}

func oneOf(set []string, what string) func(string) error {
	return func(v string) error {
		if !slices.Contains(set, v) {
			return fmt.Errorf("%s %q is not allowed (allowed: %s)", what, v, strings.Join(set, ", "))
		}
		return nil
	}
}

var (
	simple   = like(simpleRE, "a plain value (letters, digits, . : + - / _)")
	number   = like(numberRE, "a number")
	flag     = option{}
	valued   = option{value: true, check: simple}
	streamed = option{value: true, perStream: true, check: simple}
	filters  = option{value: true, perStream: true, check: checkFilterGraph}
	codecs   = option{value: true, perStream: true, check: oneOf(allowedCodecs, "the codec")}
)

// allowedOptions are the options of everyday transcoding, scaling, trimming, thumbnails and
// metadata. -i and -f are handled by Plan (-f names a demuxer before -i, a muxer before an output).
var allowedOptions = map[string]option{
	"y": flag, "n": flag, "hide_banner": flag, "nostats": flag, "shortest": flag, "an": flag, "vn": flag, "sn": flag, "dn": flag,
	"copyts": flag, "accurate_seek": flag, "noaccurate_seek": flag,
	"c": codecs, "codec": codecs, "vcodec": codecs, "acodec": codecs, "scodec": codecs,
	"vf": filters, "af": filters, "filter": filters, "filter_complex": filters, "lavfi": filters,
	"map":          {value: true, check: like(mapRE, "a stream map (0, 0:v, 1:a:0, 0:v? or [label])")},
	"map_metadata": {value: true, perStream: true, check: like(mapRE, "an input index or -1")},
	"map_chapters": {value: true, check: number},
	"metadata":     {value: true, perStream: true, check: like(metadataRE, "key=value")},
	"disposition":  streamed,
	"ss":           valued, "t": valued, "to": valued, "sseof": valued, "itsoffset": valued,
	"frames": {value: true, perStream: true, check: number}, "vframes": {value: true, check: number}, "aframes": {value: true, check: number},
	"stream_loop": {value: true, check: number},
	"loop":        {value: true, check: number},
	"r":           streamed, "framerate": valued, "fpsmax": streamed, "fps_mode": streamed, "vsync": valued,
	"s": streamed, "aspect": streamed, "pix_fmt": streamed, "sample_fmt": streamed,
	"ar": streamed, "ac": streamed, "channel_layout": streamed, "ch_layout": streamed,
	"b": streamed, "ab": valued, "vb": valued, "maxrate": streamed, "minrate": streamed, "bufsize": streamed,
	"q": streamed, "qscale": streamed, "crf": streamed, "qp": streamed, "qmin": streamed, "qmax": streamed,
	"preset": streamed, "tune": streamed, "profile": streamed, "level": streamed, "g": streamed, "keyint_min": streamed, "bf": streamed,
	"compression_level": streamed, "lossless": streamed, "quality": streamed, "cpu-used": streamed, "deadline": streamed,
	"row-mt": streamed, "speed": streamed, "vbr": streamed, "application": streamed, "cutoff": streamed,
	"tag": streamed, "threads": valued, "strict": valued, "sws_flags": valued, "update": valued, "start_number": valued,
	"movflags": {value: true, check: like(flagsRE, "a list of movflags such as +faststart")},
}

// refusedWhy explains the refusal of some options that are not on the list, for clearer messages.
var refusedWhy = map[string]string{
	"protocol_whitelist": "sinew sets it", "protocol_blacklist": "sinew sets the whitelist", "format_whitelist": "sinew sets it",
	"fs": "sinew bounds the output size", "filter_script": "it reads a file", "filter_complex_script": "it reads a file",
	"safe": "it lets the concat demuxer open any path", "attach": "it reads a file", "dump_attachment": "it writes files",
	"report": "it writes a log file", "vstats_file": "it writes a file", "sdp_file": "it writes a file", "progress": "it opens a URL",
	"passlogfile": "it reads and writes files", "pattern_type": "it makes the image2 demuxer read every file matching a pattern", "pass": "it reads and writes a log file",
	"x264-params": "its options read and write files", "x265-params": "its options read and write files",
	"init_hw_device": "no devices are available", "hwaccel_device": "no devices are available",
}

// inputFormats are the demuxers an input may be opened with: the media sniffed by Sniff, and never a
// playlist, concat script, lavfi graph or device.
var inputFormats = []string{"mov", "mp4", "m4a", "3gp", "3g2", "mj2", "matroska", "webm", "avi", "asf", "mp3", "wav", "ogg", "flac",
	"image2", "png_pipe", "jpeg_pipe", "gif", "gif_pipe", "tiff_pipe", "bmp_pipe"}

// outputFormats are the muxers an output may be written with: one file each, no segmenters, tee,
// playlists or network muxers.
var outputFormats = []string{"mp4", "mov", "ipod", "3gp", "matroska", "webm", "avi", "asf", "mp3", "wav", "ogg", "oga", "opus", "flac",
	"adts", "ac3", "mpegts", "image2", "gif", "apng", "webp", "mjpeg", "null"}

// outputExts are the extensions an output file name may have (ffmpeg picks the muxer by it).
var outputExts = []string{".mp4", ".m4a", ".m4v", ".mov", ".3gp", ".mkv", ".mka", ".webm", ".avi", ".wmv", ".asf", ".mp3", ".wav",
	".ogg", ".oga", ".ogv", ".opus", ".flac", ".aac", ".ac3", ".ts", ".jpg", ".jpeg", ".png", ".apng", ".gif", ".webp", ".bmp", ".tif", ".tiff"}

// refusedExts explains the refusal of output extensions whose muxers write more than one file.
var refusedExts = map[string]string{
	".m3u8": "an HLS playlist: the hls muxer writes segment files beside it, named by patterns",
	".m3u":  "an HLS playlist: the hls muxer writes segment files beside it, named by patterns",
	".mpd":  "a DASH manifest: the dash muxer writes segment files beside it, named by patterns",
}

// allowedCodecs are the encoders (and copy) an output may use.
var allowedCodecs = []string{"copy", "libx264", "h264", "libx265", "hevc", "mpeg4", "mpeg2video", "mpeg1video", "libvpx", "libvpx-vp9",
	"vp8", "vp9", "libaom-av1", "libsvtav1", "av1", "mjpeg", "png", "apng", "gif", "bmp", "tiff", "libwebp", "webp", "rawvideo",
	"aac", "libmp3lame", "mp3", "libopus", "opus", "libvorbis", "vorbis", "flac", "alac", "ac3", "pcm_s16le", "pcm_s24le",
	"pcm_s32le", "pcm_f32le", "pcm_u8", "pcm_s16be", "pcm_mulaw", "pcm_alaw", "mov_text"}

// allowedFilters are filters that read only their input streams: none opens a file, a URL, a
// device, a model or a plugin (movie, amovie, subtitles, ass, lut3d, curves' psfile, sendcmd, zmq,
// ladspa, lv2, frei0r, dnn_*, vidstab*, psnr/ssim stats files are all off the list).
var allowedFilters = []string{
	"scale", "crop", "pad", "fps", "format", "setsar", "setdar", "setpts", "trim", "hflip", "vflip", "transpose", "rotate",
	"overlay", "hstack", "vstack", "xstack", "concat", "split", "select", "thumbnail", "tile", "palettegen", "paletteuse",
	"drawbox", "drawgrid", "drawtext", "fade", "eq", "hue", "colorchannelmixer", "colorbalance", "lut", "lutrgb", "lutyuv",
	"negate", "boxblur", "gblur", "unsharp", "smartblur", "edgedetect", "deband", "yadif", "bwdif", "null", "copy",
	"zoompan", "framerate", "reverse", "loop", "tpad", "setfield", "colorkey", "chromakey", "blend", "noise", "vignette",
	"cropdetect", "showinfo", "fieldorder", "geq", "settb", "showwaves", "showwavespic", "showspectrum", "showspectrumpic",
	"volume", "aresample", "aformat", "amix", "amerge", "pan", "loudnorm", "atempo", "afade", "atrim", "asetpts", "highpass",
	"lowpass", "bandpass", "equalizer", "acompressor", "dynaudnorm", "silenceremove", "areverse", "aloop", "apad", "asplit",
	"anull", "acopy", "channelsplit", "join", "aecho", "adelay", "asetrate", "afftdn", "agate", "alimiter", "acrossfade",
	"asettb", "aselect",
}

// keyedOnly are filters whose options must all be key=value, because a positional one would be a
// file (drawtext's first option is fontfile); refusedKeys are option names no filter may set.
var (
	keyedOnly   = map[string]bool{"drawtext": true, "paletteuse": true}
	refusedKeys = lazyRE(`(?i)(file|path|url|model|stats|debug_kdtree|dump)`)
)

// checkOption finds the option w names and says whether it is allowed.
func checkOption(field, w string) (option, error) {
	if strings.HasPrefix(w, "-/") {
		return option{}, fault.Invalid(field, "%s: options that read their value from a file (-/name) are not allowed", field)
	}
	name, spec, hasSpec := strings.Cut(strings.TrimPrefix(w, "-"), ":")
	if why, ok := refusedWhy[name]; ok {
		return option{}, fault.Invalid(field, "%s: the option -%s is not allowed: %s", field, name, why)
	}
	o, ok := allowedOptions[name]
	if !ok {
		return option{}, fault.Invalid(field, "%s: the option -%s is not on sinew's list of ffmpeg options; allowed: -i, -f, %s", field, name, optionList())
	}
	if hasSpec && (!o.perStream || !specRE().MatchString(spec)) {
		return option{}, fault.Invalid(field, "%s: -%s takes no stream specifier %q here", field, name, spec)
	}
	return o, nil
}

func optionList() string {
	names := make([]string, 0, len(allowedOptions))
	for n := range allowedOptions {
		names = append(names, "-"+n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// checkFormat is the value of -f: a demuxer or muxer of the lists.
func checkFormat(field, value string) error {
	if !slices.Contains(inputFormats, value) && !slices.Contains(outputFormats, value) {
		return fault.Invalid(field, "%s: the format %q is not allowed (for an input: %s; for an output: %s)", field, value,
			strings.Join(inputFormats, ", "), strings.Join(outputFormats, ", "))
	}
	return nil
}

// checkOutputName is an output file: a plain name with a media extension, written by an allowed
// muxer (format, from -f, when given).
func checkOutputName(field, name, format string) error {
	if name == "-" {
		return fault.Invalid(field, "%s: \"-\" is ffmpeg's standard output (the pipe: protocol); name an output file", field)
	}
	if err := checkName(field, name); err != nil {
		return err
	}
	ext := strings.ToLower(filepath.Ext(name))
	if why, ok := refusedExts[ext]; ok {
		return fault.Invalid(field, "%s: the output %q would be %s", field, name, why)
	}
	if !slices.Contains(outputExts, ext) {
		return fault.Invalid(field, "%s: the output %q has no media extension sinew writes (%s)", field, name, strings.Join(outputExts, " "))
	}
	if format != "" && !slices.Contains(outputFormats, format) {
		return fault.Invalid(field, "%s: the output format %q is not allowed (allowed: %s)", field, format, strings.Join(outputFormats, ", "))
	}
	return nil
}

// checkFilterGraph parses a filtergraph as libavfilter does (chains split at ;, filters at ,, each
// [in]name=options[out], with av_get_token's quoting and escaping at each level) and checks each
// filter's name and options.
func checkFilterGraph(graph string) error {
	s := graph
	for {
		s = skipLabels(s)
		var name, args string
		name, s = getToken(s, "=,;[")
		if strings.HasPrefix(s, "=") {
			args, s = getToken(s[1:], "[],;")
		}
		if err := checkFilter(name, args); err != nil {
			return err
		}
		s = strings.TrimLeft(skipLabels(s), " \t\n\r")
		if s == "" {
			return nil
		}
		if s[0] != ',' && s[0] != ';' {
			return fmt.Errorf("the filtergraph cannot be read at %q", s)
		}
		s = s[1:]
	}
}

// skipLabels skips link labels such as [0:v] [out].
func skipLabels(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\n\r")
		if !strings.HasPrefix(s, "[") {
			return s
		}
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return ""
		}
		s = s[end+1:]
	}
}

// optionKeyRE is an option's key as libavutil reads one (av_opt_get_key_value): no escapes.
var optionKeyRE = lazyRE(`^[A-Za-z0-9_\-/.]+=`)

func checkFilter(name, args string) error {
	name, _, _ = strings.Cut(name, "@") // an instance name: scale@big
	if name == "" && args == "" {
		return nil
	}
	if !slices.Contains(allowedFilters, name) {
		return fmt.Errorf("the filter %s is not allowed: only filters that read nothing but their input streams are (movie and amovie, subtitles, ass, sendcmd and the like open files or URLs of their own); allowed: %s", name, strings.Join(allowedFilters, ", "))
	}
	for args != "" {
		var key, value string
		if k := optionKeyRE().FindString(args); k != "" {
			key = strings.TrimSuffix(k, "=")
			value, args = getToken(args[len(k):], ":")
		} else {
			value, args = getToken(args, ":")
		}
		args = strings.TrimPrefix(args, ":")
		if key != "" && refusedKeys().MatchString(key) {
			return fmt.Errorf("the option %s of the filter %s is not allowed: it reads or writes a file", key, name)
		}
		if key == "" && keyedOnly[name] && value != "" {
			return fmt.Errorf("the filter %s takes key=value options only here (a positional option of it is a file): %q", name, value)
		}
	}
	return nil
}

// getToken is libavutil's av_get_token: the text up to the first of term outside '...' quotes,
// with \ escapes resolved and surrounding blanks dropped; it answers the token and the rest,
// which starts at the terminator.
func getToken(s, term string) (string, string) {
	s = strings.TrimLeft(s, " \t\n\r")
	var out strings.Builder
	end := 0 // length of out up to its last quoted or escaped byte, which trimming keeps
	i := 0
	for i < len(s) && strings.IndexByte(term, s[i]) < 0 {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			out.WriteByte(s[i+1])
			i += 2
			end = out.Len()
		case c == '\'':
			i++
			for i < len(s) && s[i] != '\'' {
				out.WriteByte(s[i])
				i++
			}
			i++
			end = out.Len()
		default:
			out.WriteByte(c)
			i++
		}
	}
	tok := out.String()
	trimmed := strings.TrimRight(tok, " \t\n\r")
	if len(trimmed) < end {
		trimmed = tok[:end]
	}
	return trimmed, s[min(i, len(s)):]
}
