package testworld_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	registryimage "github.com/hashicorp/packer-plugin-sdk/packer/registry/image"
	"github.com/hashicorp/packer-plugin-sdk/plugin"
	"github.com/zclconf/go-cty/cty"

	"github.com/stackhpc/packer-plugin-fatimage/builder/openstack"
)

// webDocsMetadata is what the integrations site reads of
// .web-docs/metadata.hcl (the parts this test holds to the plugin).
type webDocsMetadata struct {
	Identifier string
	Flags      []string
	Components [][2]string // type, slug
}

// readWebDocsMetadata reads the integration block's attributes and
// components with the HCL parser packer uses.
func readWebDocsMetadata(t *testing.T) webDocsMetadata {
	t.Helper()
	file, diags := hclparse.NewParser().ParseHCLFile(filepath.Join(root, ".web-docs", "metadata.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	str := func(b *hclsyntax.Body, name string) cty.Value {
		a, ok := b.Attributes[name]
		if !ok {
			return cty.NilVal
		}
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return v
	}
	var md webDocsMetadata
	for _, top := range file.Body.(*hclsyntax.Body).Blocks {
		if top.Type != "integration" {
			continue
		}
		md.Identifier = str(top.Body, "identifier").AsString()
		if flags := str(top.Body, "flags"); flags != cty.NilVal {
			for _, f := range flags.AsValueSlice() {
				md.Flags = append(md.Flags, f.AsString())
			}
		}
		for _, b := range top.Body.Blocks {
			if b.Type == "component" {
				md.Components = append(md.Components, [2]string{str(b.Body, "type").AsString(), str(b.Body, "slug").AsString()})
			}
		}
	}
	return md
}

// describe runs the built plugin's `describe`, as packer and the release
// workflow read it.
func describe(t *testing.T) map[string]any {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "packer-plugin-fatimage")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "describe").Output()
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	var d map[string]any
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("describe's output is not JSON: %v\n%s", err, out)
	}
	return d
}

// TestWebDocsMetadata holds .web-docs/metadata.hcl to the plugin: one
// component per registered one, named as the plugin registers it, each
// with its generated page; only the flags the integrations site knows;
// and "hcp-ready" exactly when the builder's artifact gives HCP Packer
// its image metadata.
func TestWebDocsMetadata(t *testing.T) {
	md := readWebDocsMetadata(t)
	if md.Identifier != "packer/stackhpc/fatimage" {
		t.Errorf("identifier %q; packer init and the site know the plugin as github.com/stackhpc/fatimage", md.Identifier)
	}

	d := describe(t)
	// The docs' component types against describe's keys; the provisioner
	// registered under the default name is the plugin's own name.
	kinds := map[string]string{"builder": "builders", "provisioner": "provisioners", "data-source": "datasources", "post-processor": "post_processors"}
	got := map[string][]string{}
	for _, c := range md.Components {
		typ, slug := c[0], c[1]
		key, ok := kinds[typ]
		if !ok {
			t.Errorf("component type %q is not one of the site's", typ)
			continue
		}
		got[key] = append(got[key], slug)
		page := filepath.Join(root, ".web-docs", "components", typ, slug, "README.md")
		if _, err := os.Stat(page); err != nil {
			t.Errorf("component %s %q has no generated page: %v", typ, slug, err)
		}
	}
	for _, key := range kinds {
		var want []string
		list, _ := d[key].([]any)
		for _, name := range list {
			s, _ := name.(string)
			if s == plugin.DEFAULT_NAME {
				s = "fatimage"
			}
			want = append(want, s)
		}
		slices.Sort(want)
		slices.Sort(got[key])
		if !slices.Equal(want, got[key]) {
			t.Errorf("%s: metadata.hcl lists %v, the plugin registers %v", key, got[key], want)
		}
	}

	for _, f := range md.Flags {
		if f != "hcp-ready" && f != "archived" {
			t.Errorf("flag %q is not one the integrations site knows (hcp-ready, archived)", f)
		}
	}
	a := &openstack.Artifact{ImageID: "0b5e0b0e-1d4c-4c47-9d0e-1b7a1d2c3e4f", Region: "RegionOne", SourceImageID: "src", BuilderIDValue: "x"}
	img, ok := a.State(registryimage.ArtifactStateURI).(*registryimage.Image)
	provides := ok && img != nil && img.ProviderName == "openstack" && img.ImageID == a.ImageID && img.ProviderRegion == a.Region
	if hcp := slices.Contains(md.Flags, "hcp-ready"); hcp != provides {
		t.Errorf("metadata.hcl says hcp-ready=%v, the builder's artifact gives HCP Packer metadata=%v (%#v)", hcp, provides, img)
	}
}

// TestReleaseWorkflowPins holds the release workflow to the pinned tools
// and the archive names to the plugin: GoReleaser at tools/goreleaser's
// version, and describe's API version equal to .goreleaser.yml's default.
func TestReleaseWorkflowPins(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(root, "tools", "goreleaser", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	pin := regexp.MustCompile(`github.com/goreleaser/goreleaser/v2 (v\S+)`).FindSubmatch(mod)
	if pin == nil {
		t.Fatal("tools/goreleaser/go.mod pins no goreleaser")
	}
	wf, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wf), "version: "+string(pin[1])+"\n") {
		t.Errorf("release.yml does not run goreleaser %s, the version tools/goreleaser pins", pin[1])
	}
	cfg, err := os.ReadFile(filepath.Join(root, ".goreleaser.yml"))
	if err != nil {
		t.Fatal(err)
	}
	api, _ := describe(t)["api_version"].(string)
	if api == "" || !strings.Contains(string(cfg), `envOrDefault "API_VERSION" "`+api+`"`) {
		t.Errorf(".goreleaser.yml's default API_VERSION is not describe's %q", api)
	}
}

// TestReleasePreflight runs scripts/release-preflight.sh on trees that a
// release tag may or may not be pushed for.
func TestReleasePreflight(t *testing.T) {
	script, err := filepath.Abs(filepath.Join(root, "scripts", "release-preflight.sh"))
	if err != nil {
		t.Fatal(err)
	}
	const changelog = "# Changelog\n\n## Unreleased\n\n- next\n\n## 1.2.0 - 2026-11-20\n\n### Added\n- one\n- two\n\n## 1.1.0 - 2026-10-01\n\n- old\n"
	for _, tc := range []struct {
		name, tag, version, changelog string
		want                          string // in stdout when it passes, else in stderr
		ok                            bool
	}{
		{"release", "v1.2.0", "1.2.0", changelog, "### Added\n- one\n- two\n", true},
		{"not a version tag", "1.2.0", "1.2.0", changelog, "not of the form vX.Y.Z", false},
		{"version.go behind", "v1.2.0", "1.1.0", changelog, `Version = "1.1.0"`, false},
		{"no section", "v1.3.0", "1.3.0", changelog, "no dated section '## 1.3.0", false},
		{"undated section", "v1.2.0", "1.2.0", strings.Replace(changelog, "1.2.0 - 2026-11-20", "1.2.0", 1), "no dated section", false},
		{"empty section", "v1.2.0", "1.2.0", "## 1.2.0 - 2026-11-20\n\n## 1.1.0 - 2026-10-01\n- old\n", "lists no change", false},
		{"dot is literal", "v1.2.0", "1.2.0", "## 1x2x0 - 2026-11-20\n- one\n", "no dated section", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "version"), 0o755); err != nil {
				t.Fatal(err)
			}
			vgo := "package version\n\nvar (\n\tVersion = \"" + tc.version + "\"\n\tVersionPrerelease = \"dev\"\n)\n"
			for name, body := range map[string]string{"version/version.go": vgo, "CHANGELOG.md": tc.changelog} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("bash", script, tc.tag, dir)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if (err == nil) != tc.ok {
				t.Fatalf("exit %v, want ok=%v\nstdout: %s\nstderr: %s", err, tc.ok, out, stderr.String())
			}
			where := stderr.String()
			if tc.ok {
				where = string(out)
				if strings.Contains(where, "next") || strings.Contains(where, "old") {
					t.Errorf("notes hold another section's entries:\n%s", where)
				}
			}
			if !strings.Contains(where, tc.want) {
				t.Errorf("want %q in:\n%s", tc.want, where)
			}
		})
	}
}

// fakeDist lays out what GoReleaser writes for version 1.2.3-dev: a zip
// per platform holding its binary (the linux/amd64 one a script answering
// describe), the SHA256SUMS and, with a GNUPGHOME, its signature. spoil
// spoils it before the sums are written.
func fakeDist(t *testing.T, gnupg string, spoil func(t *testing.T, dist string)) string {
	t.Helper()
	dist := t.TempDir()
	const base = "packer-plugin-fatimage_v1.2.3-dev_x5.0_"
	var sums strings.Builder
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, arch := range []string{"amd64", "arm64"} {
			bin := base + goos + "_" + arch
			if goos == "windows" {
				bin += ".exe"
			}
			body := "not run"
			if goos == "linux" && arch == "amd64" {
				body = "#!/bin/sh\necho '{\"version\":\"1.2.3-dev\",\"sdk_version\":\"0.6.10\",\"api_version\":\"x5.0\"}'\n"
			}
			writeZip(t, filepath.Join(dist, base+goos+"_"+arch+".zip"), bin, body)
		}
	}
	if spoil != nil {
		spoil(t, dist)
	}
	zips, _ := filepath.Glob(filepath.Join(dist, "*.zip"))
	for _, z := range zips {
		data, err := os.ReadFile(z)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(data), filepath.Base(z))
	}
	name := filepath.Join(dist, "packer-plugin-fatimage_v1.2.3-dev_SHA256SUMS")
	if err := os.WriteFile(name, []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if gnupg != "" {
		sign := exec.Command("gpg", "--batch", "--output", name+".sig", "--detach-sign", name)
		sign.Env = append(os.Environ(), "GNUPGHOME="+gnupg)
		if out, err := sign.CombinedOutput(); err != nil {
			t.Fatalf("gpg --detach-sign: %v\n%s", err, out)
		}
	}
	return dist
}

// writeZip writes a zip holding one executable file.
func writeZip(t *testing.T, path, name, body string) {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, ExternalAttrs: 0o755 << 16, CreatorVersion: 3 << 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseCheck runs scripts/release-check.sh, which make
// release-snapshot ends with, on a dist that is right and on dists that
// packer init or the registry would refuse.
func TestReleaseCheck(t *testing.T) {
	for _, tool := range []string{"gpg", "gpgconf", "unzip", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (scripts/deps.sh installs it): %v", tool, err)
		}
	}
	gnupg := filepath.Join(t.TempDir(), "gnupg")
	if err := os.Mkdir(gnupg, 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GNUPGHOME="+gnupg, "PACKER=", "VERSION=", "API_VERSION=")
	gen := exec.Command("gpg", "--batch", "--passphrase", "", "--quick-gen-key", "release check test <test@invalid>", "ed25519", "sign", "1d")
	gen.Env = env
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gpg --quick-gen-key: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		kill := exec.Command("gpgconf", "--kill", "gpg-agent")
		kill.Env = env
		_ = kill.Run()
	})
	script, err := filepath.Abs(filepath.Join(root, "scripts", "release-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	linux := "packer-plugin-fatimage_v1.2.3-dev_x5.0_linux_amd64.zip"
	for _, tc := range []struct {
		name   string
		signed bool
		spoil  func(t *testing.T, dist string)
		after  func(t *testing.T, dist string)
		want   string
	}{
		{name: "right", signed: true, want: "release-check: OK: 6 zips"},
		{name: "right, its parts", signed: true, want: "SHA256SUMS.sig verified; describe ok (version=1.2.3-dev api_version=x5.0)"},
		{name: "unsigned", want: "missing"},
		{name: "a platform missing", signed: true, spoil: func(t *testing.T, d string) {
			if err := os.Remove(filepath.Join(d, strings.Replace(linux, "linux_amd64", "darwin_arm64", 1))); err != nil {
				t.Fatal(err)
			}
		}, want: "missing"},
		{name: "stray asset in the sums", signed: true, spoil: func(t *testing.T, d string) {
			if err := os.WriteFile(filepath.Join(d, "extra.zip"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, want: "has 7 entries"},
		{name: "zip changed after the sums", signed: true, after: func(t *testing.T, d string) {
			writeZip(t, filepath.Join(d, linux), strings.TrimSuffix(linux, ".zip"), "#!/bin/sh\nexit 1\n")
		}, want: "checksum mismatch"},
		{name: "sums changed after signing", signed: true, after: func(t *testing.T, d string) {
			// the same lines in another order: every check but the signature's passes
			name := filepath.Join(d, "packer-plugin-fatimage_v1.2.3-dev_SHA256SUMS")
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n")
			slices.Reverse(lines)
			if err := os.WriteFile(name, []byte(strings.Join(lines, "")), 0o644); err != nil {
				t.Fatal(err)
			}
		}, want: "does not verify"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := ""
			if tc.signed {
				home = gnupg
			}
			dist := fakeDist(t, home, tc.spoil)
			if tc.after != nil {
				tc.after(t, dist)
			}
			cmd := exec.Command("bash", script, dist)
			cmd.Env = append(env, "REQUIRE_SIGNATURE=1")
			out, err := cmd.CombinedOutput()
			if ok := strings.HasPrefix(tc.name, "right"); (err == nil) != ok {
				t.Fatalf("exit %v, want ok=%v:\n%s", err, ok, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("want %q in:\n%s", tc.want, out)
			}
		})
	}
}
