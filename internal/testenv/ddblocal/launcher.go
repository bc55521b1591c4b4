package ddblocal

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// launcherSource is the Java program that runs DynamoDB Local on 127.0.0.1 only (see its comment).
//
//go:embed launcher/LoopbackLauncher.java
var launcherSource []byte

const (
	launcherClass = "LoopbackLauncher"
	// noBrowserOrigin is the only origin DynamoDB Local's -cors allows: .invalid never resolves
	// (RFC 6761), so no page a browser loads has it, and no web page can read an answer. The jar's
	// help says the default is '*' (this release allows none without -cors); naming the list keeps
	// it closed whatever a release's default.
	noBrowserOrigin = "https://sinew.invalid"
)

// jvm is what runs DynamoDB Local: java, the directory of DynamoDBLocal.jar and the directory of
// the compiled launcher.
type jvm struct{ java, jarDir, classDir string }

// command is the JVM's command line for opts on port. Without opts.Isolated, -sharedDb gives every
// caller one database whatever its credentials.
func (j jvm) command(opts Options, port int) *exec.Cmd {
	ddb := []string{"-inMemory"}
	if opts.DBPath != "" {
		ddb = []string{"-dbPath", opts.DBPath}
	}
	if !opts.Isolated {
		ddb = append(ddb, "-sharedDb")
	}
	// -disableTelemetry keeps it off the network.
	ddb = append(ddb, "-disableTelemetry", "-cors", noBrowserOrigin, "-port", strconv.Itoa(port))
	// The jar's manifest brings DynamoDBLocal_lib, as with java -jar.
	cp := filepath.Join(j.jarDir, "DynamoDBLocal.jar") + string(os.PathListSeparator) + j.classDir
	args := append([]string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Djava.library.path=./DynamoDBLocal_lib", "-cp", cp, launcherClass}, ddb...)
	cmd := exec.Command(j.java, args...)
	cmd.Dir = j.jarDir
	return cmd
}

// launcherClasses returns a directory holding LoopbackLauncher.class compiled against the jar in
// jarDir, compiling it on first use. Java's source-file mode would compile it on every start,
// which adds half a second to a second on two busy cores; the class is cached instead, under the
// user's cache directory, keyed by the launcher's source and the DynamoDB Local release it was
// compiled against.
func launcherClasses(ctx context.Context, java, jarDir string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for DynamoDB Local's launcher (set XDG_CACHE_HOME or HOME): %w", err)
	}
	sum := sha256.Sum256(append(append([]byte{}, launcherSource...), "\x00"+filepath.Base(jarDir)...))
	parent := filepath.Join(cache, "sinew", "ddblocal-launcher")
	dir := filepath.Join(parent, hex.EncodeToString(sum[:12]))
	if _, err := os.Stat(filepath.Join(dir, launcherClass+".class")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("DynamoDB Local's launcher: %w", err)
	}
	// Compiled aside and renamed into place, so that a test binary running beside this one sees
	// either no directory or a complete one.
	tmp, err := os.MkdirTemp(parent, "compile-")
	if err != nil {
		return "", fmt.Errorf("DynamoDB Local's launcher: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := compileLauncher(ctx, java, jarDir, tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, launcherClass+".class")); statErr == nil {
			return dir, nil // another process put it there first
		}
		return "", fmt.Errorf("DynamoDB Local's launcher: %w", err)
	}
	return dir, nil
}

// compileLauncher compiles the launcher into dir with the JDK's compiler module, run by java
// itself, so no javac need be on PATH.
func compileLauncher(ctx context.Context, java, jarDir, dir string) error {
	src := filepath.Join(dir, launcherClass+".java")
	if err := os.WriteFile(src, launcherSource, 0o600); err != nil {
		return fmt.Errorf("DynamoDB Local's launcher: %w", err)
	}
	// --release 17 runs on any JVM DynamoDB Local runs on; -proc:none runs no annotation processor
	// found in the jars.
	cmd := exec.CommandContext(ctx, java, "-m", "jdk.compiler/com.sun.tools.javac.Main", "--release", "17",
		"-proc:none", "-cp", filepath.Join(jarDir, "DynamoDBLocal.jar"), "-d", dir, src)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(string(out))
	if strings.Contains(msg, "jdk.compiler") {
		return fmt.Errorf("compile DynamoDB Local's launcher: this Java has no compiler (module jdk.compiler): %s; %s", msg, installHint)
	}
	return fmt.Errorf("compile DynamoDB Local's launcher: %w: %s", err, msg)
}
