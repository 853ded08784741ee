package repos

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestURLRPMs: the packages served by URL are built once per recipe, the
// signed one verifies against the lab key, the unsigned one carries no
// signature, and each has the name and version-release of its URL.
func TestURLRPMs(t *testing.T) {
	requireTools(t)
	cache := t.TempDir()
	files, err := BuildURLRPMs(Options{CacheDir: cache, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	again, err := BuildURLRPMs(Options{CacheDir: cache, Logf: t.Logf})
	if err != nil || len(again) != len(URLRPMs) {
		t.Fatalf("second build: %v", err)
	}
	key, err := readKey(filepath.Join(cache, "gpg"))
	if err != nil {
		t.Fatal(err)
	}
	db, dir := t.TempDir(), t.TempDir()
	keyFile := filepath.Join(dir, "key.asc")
	if err := os.WriteFile(keyFile, key.Public, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, nil, "rpm", "--dbpath", db, "--import", keyFile)
	for i, u := range URLRPMs {
		if !bytes.Equal(files[u.Path], again[u.Path]) {
			t.Errorf("%s differs between builds", u.Path)
		}
		f := filepath.Join(dir, filepath.Base(u.Path))
		if err := os.WriteFile(f, files[u.Path], 0o644); err != nil {
			t.Fatal(err)
		}
		nvr := run(t, nil, "rpm", "--dbpath", db, "-qp", "--nosignature", "--qf", "%{NAME}-%{VERSION}-%{RELEASE}", f)
		if nvr != u.Name+"-"+u.EVR {
			t.Errorf("URLRPMs[%d]: %s, want %s-%s", i, nvr, u.Name, u.EVR)
		}
		k := run(t, nil, "rpm", "--dbpath", db, "-K", f)
		if u.Signed != strings.HasSuffix(strings.TrimSpace(k), "digests signatures OK") || (!u.Signed && !strings.HasSuffix(strings.TrimSpace(k), ": digests OK")) {
			t.Errorf("URLRPMs[%d] (signed %v): rpm -K %s", i, u.Signed, k)
		}
	}
}
