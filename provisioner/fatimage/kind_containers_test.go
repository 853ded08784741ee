package fatimage

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/containers"
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
	auth := containers.AuthFile(content.RegistryOf(p.config.ContainerRegistries, "r.example:5000"))
	if out := s.redact("dump " + pw + " " + string(auth)); strings.Contains(out, pw) || strings.Contains(out, "czNjcjpldCAieCI") || strings.Contains(out, "dToz") {
		t.Fatalf("not redacted: %s", out)
	}
	if cc := string(containers.CurlConfig(content.RegistryOf(p.config.ContainerRegistries, "r.example:5000"))); cc != `user = "u:s3cr:et \"x\""`+"\n" {
		t.Fatalf("curl config %q", cc)
	}
	if containers.AuthFile(content.RegistryOf(p.config.ContainerRegistries, "other:1")) != nil {
		t.Fatal("an auth file for a registry without credentials")
	}
}

// TestResolveScript runs the VM's digest check locally with the real
// curl against the real registry: basic auth from the curl config, a
// Bearer token service, a matching pin, a wrong pin (the cause first), a
// wrong password and an unknown tag.
func TestResolveScript(t *testing.T) {
	needs.Tools(t, "curl")
	const user, pw = "puller", `pa:ss "w" \x`
	reg, open := registry.StartPair(t, user, pw)
	front := strings.TrimPrefix(registry.BearerFront(t, open.URL(), "", "").URL, "http://")
	want := reg.Digest("library/mysql:8.0.30")
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "curl"), containers.CurlConfig(content.Registry{Host: reg.Host(), Username: user, Password: pw}), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(host, ref, pin, conf string) (string, error) {
		return runLocal(t, work, newScript("content", kindBody(containers.Kind{})).call("fatimage_oci_resolve", "containers[0]", host, "library/mysql", ref, pin, "1", conf))
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
	sc := newScript("content", kindBody(containers.Kind{}))
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
	_, open := registry.StartPair(t, "u", "p")
	front := strings.TrimPrefix(registry.BearerFront(t, open.URL(), "", "").URL, "http://")
	want := open.Digest("library/mysql:8.0.30")
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal(err)
	}
	sc := newScript("content", kindBody(containers.Kind{})).call("fatimage_oci_resolve", "containers[0]", front, "library/mysql", "8.0.30", want, "1", "")
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

// TestTagOnlyContainersSaidNotVerified: the built-in groups' images are
// pinned by tag only; the build says so with the digest the tag resolved
// to, and image.json records that digest. A pinned image is not warned.
func TestTagOnlyContainersSaidNotVerified(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	reg, _ := registry.StartPair(t, "puller", "pw")
	want := reg.Digest("library/mysql:8.0.30")
	pl := mustGroups(t, []string{"mysql", "filebeat"}, map[string]any{"container_registry": reg.Host(), "content_source": "host",
		"container_registries": []map[string]any{{"host": reg.Host(), "insecure": true, "username": "puller", "password": "pw"}}})
	pl.Containers[1].Digest = reg.Digest("beats/filebeat-oss:7.12.1")
	var out bytes.Buffer
	s := &state{cfg: pl.cfg, plan: pl, ui: &packersdk.BasicUi{Writer: &out, ErrorWriter: &out, PB: &packersdk.NoopProgressTracker{}}, comm: &recordingComm{uploads: map[string][]byte{}}, workDir: "/w"}
	if err := stepNamed("containers-fetch").run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	warn := "WARNING: containers[0]: " + reg.Host() + "/library/mysql:8.0.30 is pinned by tag only: the tag resolved to " + want + ", not verified against a pinned digest"
	if !strings.Contains(out.String(), warn) || strings.Count(out.String(), "pinned by tag only") != 1 {
		t.Errorf("want one warning %q in:\n%s", warn, out.String())
	}
	if rec, _ := s.content.records["containers"].([]containers.Record); len(rec) != 2 || rec[0].Digest != want {
		t.Errorf("image.json records %+v, want mysql at %s", rec, want)
	}
}

// stepNamed is the step of the table named name.
func stepNamed(name string) step {
	for _, st := range steps {
		if st.name == name {
			return st
		}
	}
	panic("no step " + name)
}

// TestGroupContainerUsers: a group's container whose user the run does
// not create is refused at Prepare naming the group, as the template's
// are (TestContainersValidation), rather than on the VM after the
// packages; the template's items are left to validateContainers.
func TestGroupContainerUsers(t *testing.T) {
	p := &plan{ContentOptions: ContentOptions{Containers: []containers.Container{
		{Image: "docker.io/library/mysql:8.0.30", User: "podman"}, {Image: "a/b:1", User: "svc"}, {Image: "c/d:1", User: "nobody2"},
	}}, origins: map[string][]origin{"containers": {{group: "mysql"}, {group: "other"}, {}}}, users: []User{{Name: "podman"}}, sets: &resolved{}}
	errs := p.groupContainerUsers()
	if len(errs) != 1 || errs[0].Error() != `group "other": containers image a/b:1: user "svc" is neither root nor a user this run creates (add it to users, or a group that has it)` {
		t.Fatalf("%v", errs)
	}
}
