package ddblocal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// sharedDBFile is the file DynamoDB Local keeps under -dbPath with -sharedDb.
const sharedDBFile = "shared-local-instance.db"

// The names DynamoDB Local accepts in a request's credential scope; an isolated server names its
// file <AccessKeyId>_<region>.db from them, so they also keep the name inside dbPath.
var (
	accessKeyIDPattern = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	regionPattern      = regexp.MustCompile(`^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$`)
)

// IsolatedDBFile is the file under -dbPath where an isolated server (Options.Isolated) keeps the
// database of accessKeyID in region.
func IsolatedDBFile(accessKeyID, region string) string { return accessKeyID + "_" + region + ".db" }

// AdoptSharedDB gives the data a server kept under dbPath with -sharedDb to the isolated database
// of accessKeyID in region: when dbPath holds shared-local-instance.db and not that database's
// file, it renames the one to the other, so a data directory keeps its tables when it starts to be
// served with Options.Isolated. It never overwrites a file, and does nothing (moved false) when
// there is nothing to move or the target exists. Call it while no server uses dbPath.
func AdoptSharedDB(dbPath, accessKeyID, region string) (moved bool, err error) {
	if !accessKeyIDPattern.MatchString(accessKeyID) || !regionPattern.MatchString(region) {
		return false, fmt.Errorf("ddblocal: adopt %s: access key id %q or region %q is not one DynamoDB Local accepts", dbPath, accessKeyID, region)
	}
	src := filepath.Join(dbPath, sharedDBFile)
	dst := filepath.Join(dbPath, IsolatedDBFile(accessKeyID, region))
	if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("ddblocal: adopt %s: %w", src, err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return false, nil
	}
	// A journal left by a crash belongs to its database: SQLite rolls the database back from it
	// on the next open. It goes first, so that a failure in between leaves it beside the database
	// it names or, at worst, waiting beside the target for the database to follow.
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		if _, err := moveNoReplace(src+suffix, dst+suffix); err != nil {
			return false, err
		}
	}
	return moveNoReplace(src, dst)
}

// moveNoReplace renames src to dst unless dst exists. A hard link fails on an existing dst, where
// os.Rename would replace it; src goes once dst names the file.
func moveNoReplace(src, dst string) (moved bool, err error) {
	if err := os.Link(src, dst); errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("ddblocal: adopt %s: %w", src, err)
	}
	if err := os.Remove(src); err != nil {
		return false, fmt.Errorf("ddblocal: adopt %s: %w", src, err)
	}
	return true, nil
}
