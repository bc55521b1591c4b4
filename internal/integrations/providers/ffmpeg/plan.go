package ffmpeg

import (
	"fmt"
	"slices"
	"strings"

	"sinew/internal/fault"
)

// Planning a run: a call's argument vector checked word by word against the allow-list (allow.go)
// before ffmpeg sees it.

// Run is a checked argument vector: the input names in -i order, the output name, and the words.
type Run struct {
	Args   []string
	Inputs []string
	Output string
}

// Argv is the vector ffmpeg runs with: sinew's fixed options, each -i preceded by the whitelists,
// and the output preceded by its size bound.
func (r Run) Argv(maxOut int64) []string {
	// Errors only, no progress lines: the log's tail is what an error message shows.
	argv := []string{"-nostdin", "-hide_banner", "-nostats", "-loglevel", "error", "-y"}
	last := len(r.Args) - 1
	for i, a := range r.Args {
		if a == "-i" {
			argv = append(argv, "-protocol_whitelist", "file", "-format_whitelist", strings.Join(inputFormats, ","))
		}
		if i == last {
			argv = append(argv, "-fs", fmt.Sprint(maxOut))
		}
		argv = append(argv, a)
	}
	return argv
}

// Plan checks the arguments and finds the inputs and the output, or says which argument breaks
// which rule.
func Plan(args BashCmdArguments) (Run, error) {
	if args.Cmd != "" {
		return Run{}, fault.Invalid("cmd", "cmd is a shell command, and sinew runs no shell: give the words after ffmpeg as args, e.g. [\"-i\", \"in.mp4\", \"-vf\", \"scale=320:-1\", \"out.mp4\"]")
	}
	words := args.Args
	if len(words) > 0 && (words[0] == "ffmpeg" || strings.HasSuffix(words[0], "/ffmpeg")) {
		words = words[1:] // a leading program name is a harmless habit
	}
	if len(words) == 0 {
		return Run{}, fault.Invalid("args", "args is required: ffmpeg's arguments, ending with the output file name")
	}
	if len(words) > maxArgs {
		return Run{}, fault.Invalid("args", "args may have at most %d words", maxArgs)
	}
	r := Run{Args: words}
	last := len(words) - 1
	format := "" // a pending -f: a demuxer for the next -i, a muxer for the next output
	for i := 0; i <= last; i++ {
		w, field := words[i], fmt.Sprintf("args[%d]", i)
		if err := checkWord(field, w); err != nil {
			return Run{}, err
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			// An output file; the last word must be one.
			if err := checkOutputName(field, w, format); err != nil {
				if i == last {
					return Run{}, fault.Invalid(field, "the last argument is the output file: %s", fault.Message(err))
				}
				return Run{}, err
			}
			format = ""
			continue
		}
		if i == last {
			return Run{}, fault.Invalid(field, "%s: the last argument must be the output file name, not the option %s", field, w)
		}
		value, vfield := words[i+1], fmt.Sprintf("args[%d]", i+1)
		switch w {
		case "-i":
			if err := r.addInput(vfield, value, format, i+1 == last); err != nil {
				return Run{}, err
			}
			format = ""
			i++
			continue
		case "-f":
			if err := checkFormat(vfield, value); err != nil {
				return Run{}, err
			}
			format = value
			i++
			continue
		}
		takesValue, err := checkOptionValue(field, w, vfield, value)
		if err != nil {
			return Run{}, err
		}
		if takesValue {
			i++
		}
	}
	r.Output = words[last]
	outField := fmt.Sprintf("args[%d]", last)
	for _, n := range r.Inputs {
		if n == r.Output {
			return Run{}, fault.Invalid(outField, "%s: the output file %q is also an input", outField, n)
		}
	}
	if len(r.Inputs) != len(args.File) {
		return Run{}, fault.Invalid("file", "file has %d item(s) but args has %d -i option(s): give one file per -i, in order", len(args.File), len(r.Inputs))
	}
	return r, nil
}

// checkOptionValue checks the option w (at field) and, when it takes one, its value (at vfield),
// and says whether it took the value.
func checkOptionValue(field, w, vfield, value string) (bool, error) {
	o, err := checkOption(field, w)
	if err != nil || !o.value {
		return false, err
	}
	if err := checkWord(vfield, value); err != nil {
		return false, err
	}
	if o.check != nil {
		if err := o.check(value); err != nil {
			return false, fault.Invalid(vfield, "%s (the value of %s): %v", vfield, w, err)
		}
	}
	return true, nil
}

// addInput records the input name of a -i (at field), opened with format when one is given.
func (r *Run) addInput(field, name, format string, isLast bool) error {
	if isLast {
		return fault.Invalid(field, "%s: -i needs an input file name, and the output file name must come last", field)
	}
	if name == "-" {
		return fault.Invalid(field, "%s: \"-\" is ffmpeg's standard input (the pipe: protocol); give the input as a file", field)
	}
	// checkWord first, so the message names the protocol, absolute path or ".." (checkName only says "no plain name").
	if err := checkWord(field, name); err != nil {
		return err
	}
	if err := checkName(field, name); err != nil {
		return err
	}
	if format != "" && !slices.Contains(inputFormats, format) {
		return fault.Invalid(field, "%s: the input format %q is not allowed (allowed: %s)", field, format, strings.Join(inputFormats, ", "))
	}
	if slices.Contains(r.Inputs, name) {
		return fault.Invalid(field, "%s: input name %q is used twice", field, name)
	}
	r.Inputs = append(r.Inputs, name)
	return nil
}

var (
	// nameRE is a plain file name in the working directory: no directory, no protocol.
	nameRE = lazyRE(`^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$`)
	// protoRE finds "name:" where name is one of ffmpeg's protocols, at a word start in any
	// argument (filter options too: movie=http\://... opens a URL). Backslashes and quotes are
	// removed before matching, since filtergraphs use them to escape.
	// A protocol may nest another after a + (crypto+file:, hls+http:): the outer one is named. The
	// subfile protocol also takes "subfile,,start,N,end,M,,:name".
	protoRE = lazyRE(`(?i)(^|[^a-z0-9_])(async|bluray|cache|concat|concatf|crypto|data|dtls|fd|ffrtmpcrypt|ffrtmphttp|file|ftp|gopher|gophers|hls|http|httpproxy|https|icecast|ipfs|ipns|md5|mmsh|mmst|pipe|prompeg|rist|rtmp|rtmpe|rtmps|rtmpt|rtmpte|rtmpts|rtp|rtsp|sctp|sftp|smb|srt|srtp|subfile|tcp|tee|tls|udp|udplite|unix|zmq|amqp|dav|davs|ws|wss|libssh|librtmp|android_content)(\+[a-z0-9+.\-]*)?\s*:|(^|[^a-z0-9_])(subfile)\s*,`)
	// pathSep splits an argument into the places a path could start in ffmpeg's syntaxes (option
	// values, filter options, stream specifiers); not at "(", where "(w-tw)/2" is a division.
	pathSep = lazyRE(`[=:,;\[\]|'"\s]`)
	// shellOps are words that only mean something to a shell.
	shellOps = map[string]bool{"|": true, "||": true, "&&": true, "&": true, ";": true, ">": true, ">>": true, "<": true, "<<": true, "2>": true, "2>&1": true, "&>": true}
)

func checkWord(field, w string) error {
	if len(w) > maxArgLen {
		return fault.Invalid(field, "%s is longer than %d bytes", field, maxArgLen)
	}
	if strings.ContainsRune(w, 0) {
		return fault.Invalid(field, "%s contains a NUL byte", field)
	}
	if shellOps[w] {
		return fault.Invalid(field, "%s is the shell operator %q; sinew runs ffmpeg without a shell, so pipes, redirections and command lists are not available", field, w)
	}
	if strings.Contains(w, "$(") || strings.Contains(w, "`") {
		return fault.Invalid(field, "%s holds shell command substitution; sinew runs no shell", field)
	}
	plain := strings.NewReplacer(`\`, "", `'`, "", `"`, "").Replace(w)
	if m := protoRE().FindStringSubmatch(plain); m != nil {
		return fault.Invalid(field, "%s names the %s: protocol; ffmpeg may read and write only the files in its working directory", field, strings.ToLower(m[2]+m[5]))
	}
	if strings.Contains(plain, "//") {
		return fault.Invalid(field, "%s looks like a URL; ffmpeg may read and write only the files in its working directory", field)
	}
	for _, piece := range pathSep().Split(plain, -1) {
		if strings.HasPrefix(piece, "/") || strings.HasPrefix(piece, "~") {
			return fault.Invalid(field, "%s holds the absolute path %q; use file names in the working directory", field, piece)
		}
		for _, comp := range strings.Split(piece, "/") {
			if comp == ".." {
				return fault.Invalid(field, "%s holds %q, which reaches outside the working directory", field, "..")
			}
		}
	}
	return nil
}

func checkName(field, name string) error {
	if strings.ContainsAny(name, "%*?[]{}") {
		return fault.Invalid(field, "%s: %q is an image sequence pattern (%%d or a glob, which the image2 demuxer and muxer expand to many files); give one file per -i and one output file", field, name)
	}
	if !nameRE().MatchString(name) || strings.Contains(name, "..") {
		return fault.Invalid(field, "%s must be a plain file name in the working directory (letters, digits, _ . -; no path, no protocol, no %%), got %q", field, name)
	}
	return nil
}
