package fatimage

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
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/fetch"
	"github.com/stackhpc/packer-plugin-fatimage/internal/redact"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/registry"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

var goodDigest = "sha256:" + strings.Repeat("ab", 32)

// TestContainersValidation: every validation message of containers and
// container_registries, at Prepare, naming the field and the cause.
func TestContainersValidation(t *testing.T) {
	ct := func(m map[string]any) map[string]any { return map[string]any{"containers": []map[string]any{m}} }
	reg := func(m map[string]any) map[string]any {
		return map[string]any{"container_registries": []map[string]any{m}}
	}
	runPrepareCases(t, []prepareCase{
		{"ok tag", ct(map[string]any{"image": "docker.io/library/mysql:8.0.30"}), ""},
		{"ok tag+pin, podman of the group", map[string]any{"groups": []string{"podman"}, "containers": []map[string]any{{"image": "mysql:8.0.30", "digest": goodDigest, "user": "podman"}}}, ""},
		{"ok digest only", ct(map[string]any{"image": "registry.example.org:5000/beats/filebeat-oss@" + goodDigest}), ""},
		{"ok user of users", map[string]any{"users": []map[string]any{{"name": "svc", "uid": 1500}}, "containers": []map[string]any{{"image": "a/b:1", "user": "svc"}}}, ""},
		{"no image", ct(map[string]any{"digest": goodDigest}), "containers[0]: image is required"},
		{"no tag", ct(map[string]any{"image": "docker.io/library/mysql"}), `containers[0]: image "docker.io/library/mysql": has neither a tag nor a digest (an implicit latest is not a pin)`},
		{"upper case", ct(map[string]any{"image": "docker.io/Library/MySQL:8"}), `containers[0]: image "docker.io/Library/MySQL:8": name "Library/MySQL" is not a lowercase repository name`},
		{"bad tag", ct(map[string]any{"image": "mysql:8.0.30!"}), `containers[0]: image "mysql:8.0.30!": tag "8.0.30!" is not a valid tag`},
		{"bad digest in image", ct(map[string]any{"image": "mysql@sha256:abc"}), `containers[0]: image "mysql@sha256:abc": digest "sha256:abc" in the image must be sha256: followed by 64 lowercase hex digits`},
		{"bad digest", ct(map[string]any{"image": "mysql:8.0.30", "digest": "md5:abc"}), `containers[0]: digest "md5:abc" must be sha256: followed by 64 lowercase hex digits`},
		{"upper digest", ct(map[string]any{"image": "mysql:8.0.30", "digest": strings.ToUpper(goodDigest)}), "containers[0]: digest \"SHA256:"},
		{"tag+digest conflict", ct(map[string]any{"image": "mysql:8.0.30@" + goodDigest, "digest": "sha256:" + strings.Repeat("cd", 32)}),
			"containers[0]: digest sha256:" + strings.Repeat("cd", 32) + " conflicts with the image's @" + goodDigest + "; give the digest once"},
		{"unknown user", ct(map[string]any{"image": "mysql:8.0.30", "user": "podman"}), `containers[0]: user "podman" is neither root nor a user this run creates (add it to users, or a group that has it)`},
		{"bad user", ct(map[string]any{"image": "mysql:8.0.30", "user": "Pod Man"}), `containers[0]: user "Pod Man" is not a user name`},
		{"registry ok", reg(map[string]any{"host": "10.0.0.1:5000", "insecure": true, "username": "u", "password": "registry-test-secret"}), ""},
		{"registry no host", reg(map[string]any{"insecure": true}), "container_registries[0]: host is required"},
		{"registry url", reg(map[string]any{"host": "https://registry.example.org"}), `container_registries[0]: host "https://registry.example.org" must be host or host:port, as image references name the registry`},
		{"username alone", reg(map[string]any{"host": "docker.io", "username": "u"}), "container_registries[0]: username is set but password is not; give both or neither"},
		{"password alone", reg(map[string]any{"host": "docker.io", "password": "registry-test-secret"}), "container_registries[0]: password is set but username is not; give both or neither"},
		{"registry twice", map[string]any{"container_registries": []map[string]any{{"host": "docker.io"}, {"host": "docker.io"}}}, "container_registries[1]: host docker.io is configured twice"},
	})
}

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

// TestContainerSecretsRedacted: the password (and the base64 of
// user:password an auth file carries) is hidden in remote output.
func TestContainerSecretsRedacted(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	pw := `s3cr:et "x"`
	if err := p.Prepare(map[string]any{"container_registries": []map[string]any{{"host": "r.example:5000", "username": "u", "password": pw}}}); err != nil {
		t.Fatal(err)
	}
	s := &state{cfg: &p.config, plan: p.plan}
	auth := p.config.authFile("r.example:5000")
	if out := s.redact("dump " + pw + " " + string(auth)); strings.Contains(out, pw) || strings.Contains(out, "czNjcjpldCAieCI") || strings.Contains(out, "dToz") {
		t.Fatalf("not redacted: %s", out)
	}
	if cc := string(p.config.curlConfig("r.example:5000")); cc != `user = "u:s3cr:et \"x\""`+"\n" {
		t.Fatalf("curl config %q", cc)
	}
	if p.config.authFile("other:1") != nil {
		t.Fatal("an auth file for a registry without credentials")
	}
}

// bearerFront puts a Bearer token service in front of a registry, as
// Docker Hub has: 401 with a challenge, a token for the right basic
// credentials (any when user is ""), then the token on every request.
func bearerFront(t *testing.T, upstream, user, pw string) *httptest.Server {
	t.Helper()
	u, _ := url.Parse(upstream)
	proxy := httputil.NewSingleHostReverseProxy(u)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			if gu, gp, _ := r.BasicAuth(); user != "" && (gu != user || gp != pw) {
				http.Error(w, "bad credentials", http.StatusUnauthorized)
				return
			}
			if !strings.HasPrefix(r.URL.Query().Get("scope"), "repository:") || r.URL.Query().Get("service") != "lab" {
				http.Error(w, "bad scope", http.StatusBadRequest)
				return
			}
			json.NewEncoder(w).Encode(map[string]string{"token": "t0k"})
			return
		}
		if r.Header.Get("Authorization") != "Bearer t0k" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="lab",scope="repository:x:pull"`, srv.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.Header.Del("Authorization")
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestHostFetchOCIArchive: the host-side client fetches an image from
// the real registry (basic auth) and through a Bearer token service,
// checks the pin before anything is uploaded, caches the archive by
// digest and uploads an OCI archive whose manifest has the registry's
// digest.
func TestHostFetchOCIArchive(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	const user, pw = "puller", `pa:ss "w"`
	reg, open := startRegistries(t, user, pw)
	want := reg.Digest("library/mysql:8.0.30")
	front := bearerFront(t, open.URL(), "", "")
	frontHost := strings.TrimPrefix(front.URL, "http://")

	comm := &recordingComm{uploads: map[string][]byte{}}
	cfg := &Config{ContainerRegistries: []ContainerRegistry{
		{Host: reg.Host(), Insecure: true, Username: user, Password: pw},
		{Host: frontHost, Insecure: true},
	}}
	s := stateOf(cfg)
	s.ui, s.comm = packersdk.TestUi(t), comm
	ctx := context.Background()
	for _, host := range []string{reg.Host(), frontHost} {
		ct := Container{Image: host + "/library/mysql:8.0.30", Digest: want}
		got, err := s.uploadContainer(ctx, "containers[0]", ct, "/w/"+host+".tar")
		if err != nil || got != want {
			t.Fatalf("%s: %s %v, want %s", host, got, err, want)
		}
		files := untar(t, comm.uploads["/w/"+host+".tar"])
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
	comm.uploads = map[string][]byte{}
	wrong := reg.Digest("beats/filebeat-oss:7.12.1")
	_, err := s.uploadContainer(ctx, "containers[1]", Container{Image: reg.Host() + "/library/mysql:8.0.30", Digest: wrong}, "/w/x.tar")
	if err == nil || err.Error() != fmt.Sprintf("containers[1]: %s/library/mysql:8.0.30 has digest %s, want %s; nothing installed", reg.Host(), want, wrong) || len(comm.uploads) != 0 {
		t.Fatalf("wrong pin: %v, %d uploads", err, len(comm.uploads))
	}
	// wrong credentials: the cause names them
	s.cfg = &Config{ContainerRegistries: []ContainerRegistry{{Host: reg.Host(), Insecure: true, Username: user, Password: "nope"}}}
	_, err = s.uploadContainer(ctx, "containers[2]", Container{Image: reg.Host() + "/library/mysql:8.0.30"}, "/w/y.tar")
	if err == nil || !strings.HasPrefix(err.Error(), "containers[2]: "+reg.Host()+" refused access to library/mysql (401 Unauthorized): check container_registries' username and password") {
		t.Fatalf("wrong password: %v", err)
	}
	root, _ := fetch.CacheDir()
	if entries, _ := os.ReadDir(filepath.Join(filepath.Dir(root), "oci")); len(entries) != 2 {
		t.Fatalf("cache holds %d entries, want one per image name", len(entries))
	}
}

// startRegistries starts the lab's real registry twice on one storage:
// with basic auth for user and password, and open.
func startRegistries(t *testing.T, user, pw string) (auth, open *registry.Server) {
	t.Helper()
	needs.Tools(t, "docker-registry")
	dir := t.TempDir()
	auth, err := registry.Start(registry.Options{Dir: dir, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close() })
	open, err = registry.Start(registry.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { open.Close() })
	return auth, open
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

// TestResolveScript runs the VM's digest check locally with the real
// curl against the real registry: basic auth from the curl config, a
// Bearer token service, a matching pin, a wrong pin (the cause first), a
// wrong password and an unknown tag.
func TestResolveScript(t *testing.T) {
	needs.Tools(t, "curl")
	const user, pw = "puller", `pa:ss "w" \x`
	reg, open := startRegistries(t, user, pw)
	front := strings.TrimPrefix(bearerFront(t, open.URL(), "", "").URL, "http://")
	want := reg.Digest("library/mysql:8.0.30")
	work := t.TempDir()
	cfg := &Config{ContainerRegistries: []ContainerRegistry{{Host: reg.Host(), Username: user, Password: pw}}}
	if err := os.WriteFile(filepath.Join(work, "curl"), cfg.curlConfig(reg.Host()), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(host, ref, pin, conf string) (string, error) {
		return runLocal(t, work, newScript("content", "containers").call("fatimage_oci_resolve", "containers[0]", host, "library/mysql", ref, pin, "1", conf))
	}
	for _, c := range []struct{ host, conf string }{{reg.Host(), filepath.Join(work, "curl")}, {front, ""}} {
		out, err := run(c.host, "8.0.30", want, c.conf)
		if err != nil || !strings.Contains(out, "fatimage-container-digest containers[0] "+want) {
			t.Fatalf("%s: %v\n%s", c.host, err, out)
		}
	}
	if out, err := run(reg.Host(), want, "", filepath.Join(work, "curl")); err != nil || !strings.Contains(out, want) {
		t.Fatalf("by digest: %v\n%s", err, out)
	}
	wrong := reg.Digest("beats/filebeat-oss:7.12.1")
	out, err := run(reg.Host(), "8.0.30", wrong, filepath.Join(work, "curl"))
	if err == nil || !strings.Contains(out, "!fatimage: containers[0]: "+reg.Host()+"/library/mysql:8.0.30 has digest "+want+", want "+wrong+"; nothing installed") {
		t.Fatalf("wrong pin: %v\n%s", err, out)
	}
	out, err = run(reg.Host(), "8.0.30", "", "")
	if err == nil || !strings.Contains(out, "refused access to library/mysql (HTTP 401)") || strings.Contains(out, pw) {
		t.Fatalf("no credentials: %v\n%s", err, out)
	}
	out, err = run(open.Host(), "9.9.9", "", "")
	if err == nil || !strings.Contains(out, "has no manifest library/mysql:9.9.9 (HTTP 404)") {
		t.Fatalf("unknown tag: %v\n%s", err, out)
	}
	if left, _ := filepath.Glob(filepath.Join(work, "manifest*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// TestCredentialFilesOnTmpfs: a registry's credential file is sent once
// however many images use it, as a secret of the script (on its stdin,
// into the tmpfs secret dir the script removes when it ends), never
// staged in the work dir.
func TestCredentialFilesOnTmpfs(t *testing.T) {
	work := "/var/tmp/fatimage-0123"
	sc := newScript("content", "containers")
	a := sc.secret(work, "registry-0.json", []byte("a"))
	if b := sc.secret(work, "registry-0.json", []byte("a")); a != b || len(sc.secrets) != 1 {
		t.Fatalf("staged %d files (%s, %s)", len(sc.secrets), a, b)
	}
	if a != "/run/fatimage-0123/registry-0.json" {
		t.Fatalf("credential file at %s, not in the tmpfs secret dir", a)
	}
	sc.secret(work, "registry-1.curl", []byte("b"))
	if !strings.Contains(sc.render(work, "rocky"), "\nfatimage_secrets_in\n") {
		t.Fatal("the script does not unpack its secrets")
	}
}

// TestBearerTokenOffArgv: the pull token a Bearer challenge gets reaches
// curl on its stdin, never in its arguments, which ps shows to every user
// on the VM (issue #26 item 5). The real curl runs behind a stand-in that
// records its arguments.
func TestBearerTokenOffArgv(t *testing.T) {
	needs.Tools(t, "curl")
	_, open := startRegistries(t, "u", "p")
	front := strings.TrimPrefix(bearerFront(t, open.URL(), "", "").URL, "http://")
	want := open.Digest("library/mysql:8.0.30")
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal(err)
	}
	sc := newScript("content", "containers").call("fatimage_oci_resolve", "containers[0]", front, "library/mysql", "8.0.30", want, "1", "")
	out, calls, err := runFaked(t, sc, map[string]string{"curl": `exec "` + curl + `" "$@"`})
	if err != nil || !strings.Contains(out, "fatimage-container-digest containers[0] "+want) {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(calls) < 3 {
		t.Fatalf("want the manifest, token and manifest requests, got %q", calls)
	}
	for _, c := range calls {
		if strings.Contains(c, "t0k") {
			t.Errorf("the token is in curl's arguments: %s", c)
		}
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
		reg := ContainerRegistry{Host: host, Insecure: true, Username: user, Password: pw}
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

// TestTagOnlyContainersSaidNotVerified: the built-in groups' images are
// pinned by tag only; the build says so with the digest the tag resolved
// to, and image.json records that digest. A pinned image is not warned.
func TestTagOnlyContainersSaidNotVerified(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	reg, _ := startRegistries(t, "puller", "pw")
	want := reg.Digest("library/mysql:8.0.30")
	pl := mustGroups(t, []string{"mysql", "filebeat"}, map[string]any{"container_registry": reg.Host(), "content_source": "host",
		"container_registries": []map[string]any{{"host": reg.Host(), "insecure": true, "username": "puller", "password": "pw"}}})
	pl.Containers[1].Digest = reg.Digest("beats/filebeat-oss:7.12.1")
	var out bytes.Buffer
	s := &state{cfg: pl.cfg, plan: pl, ui: &packersdk.BasicUi{Writer: &out, ErrorWriter: &out, PB: &packersdk.NoopProgressTracker{}}, comm: &recordingComm{uploads: map[string][]byte{}}, workDir: "/w"}
	if err := stepFetchContainers(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	warn := "WARNING: containers[0]: " + reg.Host() + "/library/mysql:8.0.30 is pinned by tag only: the tag resolved to " + want + ", not verified against a pinned digest"
	if !strings.Contains(out.String(), warn) || strings.Count(out.String(), "pinned by tag only") != 1 {
		t.Errorf("want one warning %q in:\n%s", warn, out.String())
	}
	if rec := s.imageContainersRecord(); len(rec) != 2 || rec[0].Digest != want {
		t.Errorf("image.json records %+v, want mysql at %s", rec, want)
	}
}

// TestHostFetchDockerCredentials: a registry without credentials in
// container_registries is answered with those the standard files hold
// for it (docker's config.json in DOCKER_CONFIG, as `docker login`
// writes it), and their password joins the secrets the plugin redacts.
func TestHostFetchDockerCredentials(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	const user, pw = "puller", "d0cker-config-secret"
	reg, _ := startRegistries(t, user, pw)
	want := reg.Digest("library/mysql:8.0.30")
	home, conf := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("DOCKER_CONFIG", conf)
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	s := stateOf(&Config{ContainerRegistries: []ContainerRegistry{{Host: reg.Host(), Insecure: true}}})
	s.ui, s.comm = packersdk.TestUi(t), &recordingComm{uploads: map[string][]byte{}}
	ct := Container{Image: reg.Host() + "/library/mysql:8.0.30", Digest: want}
	// without the file the registry refuses, naming where credentials come from
	if _, err := s.uploadContainer(context.Background(), "containers[0]", ct, "/w/a.tar"); err == nil || !strings.Contains(err.Error(), "refused access to library/mysql (401 Unauthorized)") {
		t.Fatalf("without credentials: %v", err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pw))
	cfg := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host(), auth)
	if err := os.WriteFile(filepath.Join(conf, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := s.uploadContainer(context.Background(), "containers[0]", ct, "/w/a.tar"); err != nil || got != want {
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
	_, open := startRegistries(t, user, pw)
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
	s := stateOf(&Config{ContainerRegistries: []ContainerRegistry{{Host: host, Username: user, Password: pw}}})
	s.ui, s.comm = packersdk.TestUi(t), &recordingComm{uploads: map[string][]byte{}}
	if _, err := s.uploadContainer(context.Background(), "containers[0]", ct, "/w/a.tar"); err == nil || !strings.Contains(err.Error(), "plain http to "+host+" refused: container_registries does not mark it insecure") {
		t.Fatalf("not insecure: %v", err)
	}
	s.cfg.ContainerRegistries[0].Insecure = true
	if got, err := s.uploadContainer(context.Background(), "containers[0]", ct, "/w/a.tar"); err != nil || got != open.Digest("library/mysql:8.0.30") {
		t.Fatalf("insecure: %s %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(storageSaw) != 2 || storageSaw[0] != "" || storageSaw[1] != "" {
		t.Errorf("the storage saw %q, want two blob requests without credentials", storageSaw)
	}
}
