package stack

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3assets"
	"github.com/aws/jsii-runtime-go"
)

// CodeSource gives the code of the function in folder name.
type CodeSource func(name string) awslambda.Code

// FindRoot walks up from dir to the directory whose go.mod declares module sinew: the repository
// root, where functions/ and statemachines/ are.
func FindRoot(dir string) (string, error) {
	for d := dir; ; {
		if mod, err := moduleName(filepath.Join(d, "go.mod")); err == nil && mod == "sinew" {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no directory above %s holds the go.mod of module sinew", dir)
		}
		d = parent
	}
}

func moduleName(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(rest), nil
		}
	}
	return "", errors.New("no module line")
}

// MissingFunctions lists the described functions whose folder under root/functions has no main.go.
func MissingFunctions(root string, names []string) []string {
	var missing []string
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(root, "functions", n, "main.go")); errors.Is(err, fs.ErrNotExist) || err != nil {
			missing = append(missing, n)
		}
	}
	return missing
}

// GoBuildCode is the real code source: each function's bootstrap is built at synth by `go build`
// on this machine (local bundling, no Docker; the Go CDK's GoFunction module is not available from
// the Go proxy). The asset is hashed by its output, the binary, because the function's source is
// mostly in internal/, outside its folder; -trimpath keeps the binary, so the hash, reproducible.
func GoBuildCode(root string) CodeSource {
	return func(name string) awslambda.Code {
		return awslambda.Code_FromAsset(jsii.String(filepath.Join(root, "functions", name)), &awss3assets.AssetOptions{
			AssetHashType: awscdk.AssetHashType_OUTPUT,
			Bundling: &awscdk.BundlingOptions{
				// Never pulled: Local always answers. Should go build fail, the CDK falls back to
				// Docker and its error names this image, which points at the build output above it.
				Image: awscdk.DockerImage_FromRegistry(jsii.String("sinew-go-build-failed-see-the-go-build-output-above")),
				Local: &GoBundler{Root: root, Pkg: "./functions/" + name, Log: os.Stderr},
			},
		})
	}
}

// GoBundler builds one function's bootstrap for Lambda's arm64 provided.al2023 runtime.
type GoBundler struct {
	Root string    // the module root, where go build runs
	Pkg  string    // the package, like ./functions/api
	Log  io.Writer // go build's output
}

// Build writes the bootstrap into outDir.
func (b *GoBundler) Build(outDir string) error {
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w",
		"-o", filepath.Join(outDir, "bootstrap"), b.Pkg)
	cmd.Dir = b.Root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s (linux/arm64): %w\n%s", b.Pkg, err, out)
	}
	return nil
}

// TryBundle implements awscdk.ILocalBundling.
func (b *GoBundler) TryBundle(outputDir *string, _ *awscdk.BundlingOptions) *bool {
	if err := b.Build(*outputDir); err != nil {
		fmt.Fprintln(b.Log, "sinew:", err)
		return jsii.Bool(false)
	}
	return jsii.Bool(true)
}
