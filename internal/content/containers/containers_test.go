package containers

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/registry"
)

var goodDigest = "sha256:" + strings.Repeat("ab", 32)

func TestParseImageRef(t *testing.T) {
	for in, want := range map[string]imageRef{
		"mysql:8.0.30":                                {"docker.io", "library/mysql", "8.0.30", ""},
		"opensearchproject/opensearch:2.9.0":          {"docker.io", "opensearchproject/opensearch", "2.9.0", ""},
		"docker.elastic.co/beats/filebeat-oss:7.12.1": {"docker.elastic.co", "beats/filebeat-oss", "7.12.1", ""},
		"10.1.2.3:5000/library/mysql@" + goodDigest:   {"10.1.2.3:5000", "library/mysql", "", goodDigest},
		"localhost/x/y:1@" + goodDigest:               {"localhost", "x/y", "1", goodDigest},
	} {
		got, err := parseImageRef(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", in, got, err, want)
		}
	}
}

// TestHostFetchOCIArchive: the host-side client fetches an image from
// the real registry (basic auth) and through a Bearer token service,
// checks the pin before anything is uploaded, caches the archive by
// digest and uploads an OCI archive whose manifest has the registry's
// digest.
func TestHostFetchOCIArchive(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	const user, pw = "puller", `pa:ss "w"`
	reg, open := registry.StartPair(t, user, pw)
	want := reg.Digest("library/mysql:8.0.30")
	front := registry.BearerFront(t, open.URL(), "", "")
	frontHost := strings.TrimPrefix(front.URL, "http://")

	regs := []content.Registry{
		{Host: reg.Host(), Insecure: true, Username: user, Password: pw},
		{Host: frontHost, Insecure: true},
	}
	ctx := context.Background()
	for _, host := range []string{reg.Host(), frontHost} {
		ct := Container{Image: host + "/library/mysql:8.0.30", Digest: want}
		// the kind's fetch: the archive to upload, the digest reported
		f, err := Kind{}.Fetch(ctx, content.Env{Source: "host", WorkDir: "/w", Registries: regs, Say: logf(t)}, []Container{ct})
		if err != nil || len(f.Uploads) != 1 || f.Uploads[0].Dst != "/w/container-0.tar" || f.Uploads[0].Name != host+"/library/mysql:8.0.30" ||
			f.Reports != "fatimage-container-digest containers[0] "+want+"\n" || f.Check(f.Reports) != nil {
			t.Fatalf("%s: %+v %v, want %s", host, f, err, want)
		}
		archive, err := os.ReadFile(f.Uploads[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		files := untar(t, archive)
		var idx v1.IndexManifest
		if err := json.Unmarshal(files["index.json"], &idx); err != nil || len(idx.Manifests) != 1 || idx.Manifests[0].Digest.String() != want ||
			idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != host+"/library/mysql:8.0.30" {
			t.Fatalf("%s: index.json %s (%v)", host, files["index.json"], err)
		}
		if len(files) != 5 || files["blobs/sha256/"+strings.TrimPrefix(want, "sha256:")] == nil {
			t.Fatalf("%s: archive holds %d files", host, len(files))
		}
	}
	// a wrong pin fails before anything is uploaded or cached
	wrong := reg.Digest("beats/filebeat-oss:7.12.1")
	cached, _, _, err := hostArchive(ctx, logf(t), "containers[1]", Container{Image: reg.Host() + "/library/mysql:8.0.30", Digest: wrong}, regs[0])
	if err == nil || err.Error() != fmt.Sprintf("containers[1]: %s/library/mysql:8.0.30 has digest %s, want %s; nothing installed", reg.Host(), want, wrong) || cached != "" {
		t.Fatalf("wrong pin: %v, archive %q", err, cached)
	}
	// wrong credentials: the cause names them
	_, _, _, err = hostArchive(ctx, logf(t), "containers[2]", Container{Image: reg.Host() + "/library/mysql:8.0.30"}, content.Registry{Host: reg.Host(), Insecure: true, Username: user, Password: "nope"})
	if err == nil || !strings.HasPrefix(err.Error(), "containers[2]: "+reg.Host()+" refused access to library/mysql (401 Unauthorized): check container_registries' username and password") {
		t.Fatalf("wrong password: %v", err)
	}
	root, _ := fetch.CacheDir()
	if entries, _ := os.ReadDir(filepath.Join(filepath.Dir(root), "oci")); len(entries) != 2 {
		t.Fatalf("cache holds %d entries, want one per image name", len(entries))
	}
}

func untar(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = data
	}
}

// TestTokenRealmCredentials: the registry's Bearer challenge names the
// token service; the configured credentials go there over https or to
// the registry's own origin, never to another plain-http origin nor down
// from an https registry to http. go-containerregistry also refuses a
// token service at a private or loopback address other than the
// registry's (its guard against requests into the build host's network),
// so the https one is named by host name.
func TestTokenRealmCredentials(t *testing.T) {
	const user, pw = "puller", "S3cret-realm"
	var mu sync.Mutex
	var got []string // Authorization headers the token services saw
	tokens := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]string{"token": "t0k"})
	}
	plainTokens := httptest.NewServer(http.HandlerFunc(tokens))
	defer plainTokens.Close()
	tlsTokens := httptest.NewTLSServer(http.HandlerFunc(tokens))
	defer tlsTokens.Close()
	registryAt := func(realm *string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/token" {
				tokens(w, r)
				return
			}
			if r.Header.Get("Authorization") != "Bearer t0k" {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="lab"`, *realm))
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Write([]byte(`{"schemaVersion":2}`))
		}
	}
	var realm string
	plainReg := httptest.NewServer(registryAt(&realm))
	defer plainReg.Close()
	tlsReg := httptest.NewTLSServer(registryAt(&realm))
	defer tlsReg.Close()
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
	for _, tc := range []struct {
		name, registry, realm string
		sent                  bool
		refusal               string // the error when not sent
	}{
		{"http registry, its own origin", plainReg.URL, plainReg.URL, true, ""},
		{"http registry, https realm", plainReg.URL, strings.Replace(tlsTokens.URL, "127.0.0.1", "localhost", 1), true, ""},
		{"http registry, another http origin", plainReg.URL, plainTokens.URL, false,
			"the registry's token service " + strings.TrimPrefix(plainTokens.URL, "http://") + " is plain http on another origin than " + plainReg.URL + ": its credentials were not sent"},
		{"https registry, http realm", tlsReg.URL, plainTokens.URL, false,
			"the registry's token service " + strings.TrimPrefix(plainTokens.URL, "http://") + " is plain http on another origin than " + tlsReg.URL + ": its credentials were not sent"},
		{"http registry, https realm at another loopback address", plainReg.URL, tlsTokens.URL, false,
			"realm host \"127.0.0.1\" is a private or link-local address"},
	} {
		got, realm = nil, tc.realm
		host := strings.TrimPrefix(strings.TrimPrefix(tc.registry, "http://"), "https://")
		reg := content.Registry{Host: host, Insecure: true, Username: user, Password: pw}
		cl, err := newOCIClient(context.Background(), reg, "library/x", nil)
		if err == nil {
			_, _, _, err = cl.manifest(context.Background(), "1")
		}
		mu.Lock()
		saw := got
		mu.Unlock()
		if tc.sent {
			if err != nil || len(saw) != 1 || saw[0] != basic {
				t.Errorf("%s: %v, the token service saw %q", tc.name, err, saw)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.refusal) || len(saw) != 0 {
			t.Errorf("%s: %v, want %q; the token service saw %q", tc.name, err, tc.refusal, saw)
		}
	}
}

// TestHostFetchDockerCredentials: a registry without credentials in
// container_registries is answered with those the standard files hold
// for it (docker's config.json in DOCKER_CONFIG, as `docker login`
// writes it), and their password joins the secrets the plugin redacts.
func TestHostFetchDockerCredentials(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	const user, pw = "puller", "d0cker-config-secret"
	reg, _ := registry.StartPair(t, user, pw)
	want := reg.Digest("library/mysql:8.0.30")
	home, conf := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("DOCKER_CONFIG", conf)
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	r := content.Registry{Host: reg.Host(), Insecure: true}
	ct := Container{Image: reg.Host() + "/library/mysql:8.0.30", Digest: want}
	// without the file the registry refuses, naming where credentials come from
	if _, _, _, err := hostArchive(context.Background(), logf(t), "containers[0]", ct, r); err == nil || !strings.Contains(err.Error(), "refused access to library/mysql (401 Unauthorized)") {
		t.Fatalf("without credentials: %v", err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pw))
	cfg := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host(), auth)
	if err := os.WriteFile(filepath.Join(conf, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, got, err := hostArchive(context.Background(), logf(t), "containers[0]", ct, r); err != nil || got != want {
		t.Fatalf("with docker's config.json: %s %v, want %s", got, err, want)
	}
	if out := redact.String("pw " + pw + " auth " + auth); strings.Contains(out, pw) || strings.Contains(out, auth) {
		t.Errorf("the docker config's credentials are not redacted: %s", out)
	}
}

// TestRegistryGuard: go-containerregistry would try plain http on a
// loopback or private registry the template did not mark insecure, and
// would carry nothing but its own auth past a redirect; the guard refuses
// the first and strips any credential on a redirect to another origin (a
// blob in object storage), as fetch.SameOriginCredentials does.
func TestRegistryGuard(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	const user, pw = "puller", "gu4rd-secret"
	_, open := registry.StartPair(t, user, pw)
	var mu sync.Mutex
	var storageSaw []string
	u, _ := url.Parse(open.URL())
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		storageSaw = append(storageSaw, r.Header.Get("Authorization"))
		mu.Unlock()
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	defer storage.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gu, gp, ok := r.BasicAuth(); !ok || gu != user || gp != pw {
			w.Header().Set("WWW-Authenticate", `Basic realm="lab"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if strings.Contains(r.URL.Path, "/blobs/") {
			http.Redirect(w, r, storage.URL+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		r.Header.Del("Authorization")
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	defer front.Close()
	host := strings.TrimPrefix(front.URL, "http://")
	ct := Container{Image: host + "/library/mysql:8.0.30"}
	r := content.Registry{Host: host, Username: user, Password: pw}
	if _, _, _, err := hostArchive(context.Background(), logf(t), "containers[0]", ct, r); err == nil || !strings.Contains(err.Error(), "plain http to "+host+" refused: container_registries does not mark it insecure") {
		t.Fatalf("not insecure: %v", err)
	}
	r.Insecure = true
	if _, _, got, err := hostArchive(context.Background(), logf(t), "containers[0]", ct, r); err != nil || got != open.Digest("library/mysql:8.0.30") {
		t.Fatalf("insecure: %s %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(storageSaw) != 2 || storageSaw[0] != "" || storageSaw[1] != "" {
		t.Errorf("the storage saw %q, want two blob requests without credentials", storageSaw)
	}
}

// logf is the host's progress lines, in the test's log.
func logf(t *testing.T) func(string) { return func(l string) { t.Log(l) } }

// TestKindScripts: the VM's fetch and install of two images, one from a
// registry with credentials: the credentials travel only as the
// scripts' secrets (once per registry, in the secret dir), never in a
// call; the digests the fetch reported are what the install pulls and
// image.json records; the image pinned by tag only is warned about with
// its digest; with content_source = "host" the install loads the
// uploaded archives.
func TestKindScripts(t *testing.T) {
	const pw = "kind-s3cret"
	regs := []content.Registry{{Host: "open.example"}, {Host: "r.example:5000", Insecure: true, Username: "u", Password: pw}}
	env := content.Env{Source: "vm", WorkDir: "/w", SecretDir: "/run/w", Registries: regs}
	cs := []Container{{Image: "r.example:5000/a/b:1", User: "podman"}, {Image: "r.example:5000/c@" + goodDigest}}
	f, err := Kind{}.Fetch(context.Background(), env, cs)
	if err != nil || len(f.Script.Secrets) != 1 || f.Script.Secrets[0].Name != "registry-1.curl" || len(f.Script.Calls) != 2 ||
		f.Script.Calls[0][7] != "/run/w/registry-1.curl" || f.Script.Calls[0][6] != "1" {
		t.Fatalf("fetch %+v %v", f, err)
	}
	other := "sha256:" + strings.Repeat("cd", 32)
	out := "fatimage-container-digest containers[0] " + other + "\nfatimage-container-digest containers[1] " + goodDigest + "\n"
	if err := f.Check("fatimage-container-digest containers[0] " + other); err == nil || err.Error() != "containers[1]: the check did not report a digest" {
		t.Fatalf("check of a missing report: %v", err)
	}
	if w := f.Warn(out); len(w) != 1 || !strings.HasPrefix(w[0], "containers[0]: r.example:5000/a/b:1 is pinned by tag only: the tag resolved to "+other) {
		t.Fatalf("warnings %q", w)
	}
	env.Fetched = out
	sc, err := Kind{}.Install(env, cs)
	if err != nil || len(sc.Secrets) != 1 || sc.Secrets[0].Name != "registry-1.json" || strings.Contains(fmt.Sprint(sc.Calls), pw) ||
		fmt.Sprint(sc.Calls[0]) != "[fatimage_podman_image containers[0] podman r.example:5000/a/b "+other+" 1 1 /run/w/registry-1.json ]" {
		t.Fatalf("install %+v %v", sc, err)
	}
	r, err := Kind{}.Record(env, cs)
	if rec := r["containers"].([]Record); err != nil || len(rec) != 2 || rec[0] != (Record{"r.example:5000/a/b:1", "podman", other}) || rec[1] != (Record{"r.example:5000/c", "root", goodDigest}) {
		t.Fatalf("record %+v %v", r, err)
	}
	env.Source = "host"
	if sc, err := (Kind{}).Install(env, cs); err != nil || len(sc.Secrets) != 0 || sc.Calls[1][8] != "/w/container-1.tar" {
		t.Fatalf("host install %+v %v", sc, err)
	}
}

// TestValidate: the kind's own checks of an image, a digest and a user
// name (the provisioner's TestContainersValidation has the messages).
func TestValidate(t *testing.T) {
	errs := Kind{}.Validate([]Container{{Image: "mysql:8.0.30", User: "podman"}, {Image: "a/b:1", User: "a:b"}, {}})
	if len(errs) != 2 || errs[0].Error() != `containers[1]: user "a:b" is not a user name` || errs[1].Error() != "containers[2]: image is required" {
		t.Fatalf("%v", errs)
	}
}
