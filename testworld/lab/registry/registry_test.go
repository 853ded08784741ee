package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
)

// get fetches a manifest as a client would, returning status, digest
// header and the sha256 of the body.
func get(t *testing.T, u, user, pw string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept", MediaManifest)
	if user != "" {
		req.SetBasicAuth(user, pw)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	h := sha256.Sum256(body)
	return resp.StatusCode, resp.Header.Get("Docker-Content-Digest"), "sha256:" + hex.EncodeToString(h[:])
}

// TestServeAndRestart: the real registry serves the appliance's images
// by tag and by digest with the digests Start reports (the manifest
// bytes hash to them); a second start on the same storage pushes
// nothing new and reports the same digests; an unknown tag is 404.
func TestServeAndRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, img := range DefaultImages() {
		d := s.Digest(img.Ref())
		if !strings.HasPrefix(d, "sha256:") {
			t.Fatalf("%s: digest %q", img.Ref(), d)
		}
		digests[img.Ref()] = d
		code, hdr, sum := get(t, s.URL()+"/v2/"+img.Name+"/manifests/"+img.Tag, "", "")
		if code != 200 || hdr != d || sum != d {
			t.Fatalf("%s by tag: %d, header %s, body %s, want %s", img.Ref(), code, hdr, sum, d)
		}
		if code, _, sum := get(t, s.URL()+"/v2/"+img.Name+"/manifests/"+d, "", ""); code != 200 || sum != d {
			t.Fatalf("%s by digest: %d %s", img.Ref(), code, sum)
		}
	}
	if code, _, _ := get(t, s.URL()+"/v2/library/mysql/manifests/9.9.9", "", ""); code != http.StatusNotFound {
		t.Fatalf("unknown tag: %d", code)
	}
	s.Close()
	// the same storage: nothing to push, same digests
	s2, err := Start(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for ref, d := range digests {
		if s2.Digest(ref) != d {
			t.Fatalf("%s: %s after restart, %s before", ref, s2.Digest(ref), d)
		}
	}
}

// TestBasicAuth: with a username and password (awkward characters
// included) the registry refuses anonymous and wrong requests with 401
// and a Basic challenge, and serves the right ones; an open registry on
// the same storage serves anonymously.
func TestBasicAuth(t *testing.T) {
	dir := t.TempDir()
	const user, pw = "lab-pull", `p@ss:w%rd "x" #1`
	s, err := Start(Options{Dir: dir, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u := s.URL() + "/v2/library/mysql/manifests/8.0.30"
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Fatalf("anonymous: %s %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	if code, _, _ := get(t, u, user, "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", code)
	}
	if code, _, sum := get(t, u, user, pw); code != 200 || sum != s.Digest("library/mysql:8.0.30") {
		t.Fatalf("with credentials: %d %s", code, sum)
	}
	open, err := Start(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if code, _, sum := get(t, open.URL()+"/v2/library/mysql/manifests/8.0.30", "", ""); code != 200 || sum != s.Digest("library/mysql:8.0.30") {
		t.Fatalf("open registry on the same storage: %d %s", code, sum)
	}
	if _, err := Start(Options{Dir: dir, Username: user}); err == nil {
		t.Fatal("a username without a password was accepted")
	}
}
