package fatimage

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/rpms"
)

// TestRPMURLValidation: every validation message of rpm_urls and the
// pinned Grafana plugins, at Prepare, each naming the field and the cause.
func TestRPMURLValidation(t *testing.T) {
	rpm := func(kv ...any) map[string]any {
		m := map[string]any{"url": "https://h/x-1-1.el9.noarch.rpm", "sha256": goodSHA}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	urls := func(ms ...map[string]any) map[string]any { return map[string]any{"rpm_urls": ms} }
	runPrepareCases(t, []prepareCase{
		{"rpm ok", urls(rpm()), ""},
		{"rpm skip checksum ok", urls(rpm("sha256", "", "insecure_skip_checksum", true, "disable_gpg_check", true)), ""},
		{"rpm no sha", urls(rpm("sha256", "")), "rpm_urls[0]: sha256 is required: the file is checked before any package work (insecure_skip_checksum = true installs whatever the URL serves)"},
		{"rpm sha and skip", urls(rpm("insecure_skip_checksum", true)), "rpm_urls[0]: sha256 and insecure_skip_checksum = true exclude each other"},
		{"rpm bad sha", urls(rpm("sha256", "abc")), "rpm_urls[0]: sha256 must be 64 hex digits"},
		{"rpm no url", urls(rpm("url", "")), "rpm_urls[0]: url is required"},
		{"rpm bad url", urls(rpm("url", "ftp://h/x.rpm")), `rpm_urls[0]: url "ftp://h/x.rpm" must be an http(s) URL`},
		{"rpm relative path", urls(rpm("url", "rpms/x.rpm")), `rpm_urls[0]: url "rpms/x.rpm" must be an http(s) URL`},
		{"rpm creds", urls(rpm("url", "https://u:p@h/x.rpm")), `rpm_urls[0]: url "https://h/x.rpm" must not carry credentials (user info before @)`},
		{"rpm twice", urls(rpm(), rpm()), "rpm_urls[1]: url https://h/x-1-1.el9.noarch.rpm is also rpm_urls[0]'s"},
		{"grafana pin ok", map[string]any{"grafana_plugins": []string{"p-datasource 1.0.0"}, "grafana_plugin_sha256": map[string]string{"p-datasource": goodSHA},
			"grafana_plugin_url": "http://h/api/plugins"}, ""},
		{"grafana pin of a group's plugin", map[string]any{"groups": []string{"grafana"}, "grafana_plugin_sha256": map[string]string{"grafana-opensearch-datasource": goodSHA}}, ""},
		{"grafana pin unknown", map[string]any{"grafana_plugins": []string{"p-datasource 1.0.0"}, "grafana_plugin_sha256": map[string]string{"q-panel": goodSHA}},
			`grafana_plugin_sha256: "q-panel" is not a plugin of grafana_plugins or the groups' (p-datasource)`},
		{"grafana pin bad sha", map[string]any{"grafana_plugins": []string{"p-datasource 1.0.0"}, "grafana_plugin_sha256": map[string]string{"p-datasource": "xyz"}},
			"grafana_plugin_sha256: p-datasource: sha256 must be 64 hex digits"},
		{"grafana url relative", map[string]any{"grafana_plugin_url": "api/plugins"}, `grafana_plugin_url "api/plugins" must be an http(s) URL`},
	})
}

// TestRPMURLPlanAndWarnings: the staged files join the one transaction
// (no second dnf run), and every opt-out is warned about.
func TestRPMURLPlanAndWarnings(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"update": false, "packages": []string{"munge"}, "rpm_urls": []map[string]any{
		{"url": "https://h/a.rpm", "sha256": goodSHA},
		{"url": "https://h/b.rpm", "insecure_skip_checksum": true, "disable_gpg_check": true},
	}}); err != nil {
		t.Fatal(err)
	}
	s := &state{cfg: &p.config, plan: p.plan, workDir: "/var/tmp/fatimage-x"}
	plan := s.transaction()
	if strings.Join(plan.Install, " ") != "munge /var/tmp/fatimage-x/rpm-url-0.rpm /var/tmp/fatimage-x/rpm-url-1.rpm" {
		t.Errorf("install %q", plan.Install)
	}
	if r := plan.script().render("/w", "u"); strings.Count(r, "\nrun_transaction\n") != 1 || !strings.Contains(r, "munge\n/var/tmp/fatimage-x/rpm-url-0.rpm\n/var/tmp/fatimage-x/rpm-url-1.rpm'") {
		t.Errorf("transaction script:\n%s", r)
	}
	// a kmod by URL waits for the running kernel as one from a repository
	s.content.fetched = map[string]string{"rpm_urls": "RPM-URL 0 " + goodSHA + " kmod-lustre-client kmod-lustre-client-1-1\nRPM-URL 1 " + goodSHA + " b b-1-1\n"}
	if !s.transaction().needsRunningKernel() {
		t.Error("a kmod RPM by URL does not need the running kernel")
	}
	// RPMs alone still make a transaction
	only := stateOf(&Config{ContentOptions: ContentOptions{RPMURLs: []rpms.RPMURL{{URL: "https://h/a.rpm"}}}, Update: new(bool)})
	only.workDir = "/w"
	if only.transaction().empty() {
		t.Error("a plan with an RPM by URL is empty")
	}
	w := kindFetchPlan(kindRPMs, &p.config.ContentOptions).Warnings
	if len(w) != 2 || w[0] != "rpm_urls[1]: insecure_skip_checksum = true: https://h/b.rpm is installed without a pinned sha256: not verified" ||
		w[1] != "rpm_urls[1]: disable_gpg_check = true: the signature of https://h/b.rpm is not checked" {
		t.Errorf("warnings %q", w)
	}
}

func TestParseFetchedRPMs(t *testing.T) {
	out := "downloading x\nRPM-URL 1 " + goodSHA + " b b-2-1.el9\nRPM-URL 0 " + goodSHA + " a a-1-1\n"
	got, err := rpms.ParseFetched(out, 2)
	if err != nil || got[0].NVR != "a-1-1" || got[1].Name != "b" || got[1].SHA256 != goodSHA {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := rpms.ParseFetched("RPM-URL 0 s a a-1-1\nRPM-URL 1 s a a-2-1\n", 2); err == nil || err.Error() != "rpm_urls[1]: package a is also rpm_urls[0]'s" {
		t.Errorf("same package twice: %v", err)
	}
	if _, err := rpms.ParseFetched("RPM-URL 0 s a a-1-1\n", 2); err == nil || err.Error() != "rpm_urls[1]: the fetch did not report the package" {
		t.Errorf("missing: %v", err)
	}
}

// buildRPM builds a small unsigned noarch package with the host's
// rpmbuild (a lab dependency in scripts/deps.sh).
func buildRPM(t *testing.T, name, version string) string {
	t.Helper()
	if _, err := exec.LookPath("rpmbuild"); err != nil {
		t.Fatal("rpmbuild is needed (scripts/deps.sh installs it)")
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "x.spec")
	if err := os.WriteFile(spec, []byte("Name: "+name+"\nVersion: "+version+"\nRelease: 1\nSummary: t\nLicense: MIT\nBuildArch: noarch\n%description\nt\n%files\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("rpmbuild", "--quiet", "--define", "_topdir "+dir+"/top", "--define", "_rpmdir "+dir,
		"--define", "_build_name_fmt %%{NAME}.rpm", "-bb", spec)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rpmbuild: %v %s", err, out)
	}
	return filepath.Join(dir, name+".rpm")
}

// TestRPMCheckScript runs the check with the real rpm: a wrong sha256 and
// an unsigned package under gpgcheck fail naming the cause; with
// disable_gpg_check the package is reported with its NVR and sha256.
func TestRPMCheckScript(t *testing.T) {
	file := buildRPM(t, "prometheus-slurm-exporter", "0.22")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	// the fetch step's script: the sha256 check (unless opted out), then
	// the package's
	check := func(sum string, gpg int) (string, error) {
		sc := newScript("content", kindBody(rpms.Kind{}))
		if sum != "" {
			sc.call("fatimage_verify", "rpm_urls[0]", sum, file, "u")
		}
		return runLocal(t, work, sc.call("fatimage_rpm_check", "rpm_urls[0] (u)", "0", file, string(rune('0'+gpg))))
	}
	out, err := check(strings.Repeat("1", 64), 0)
	if err == nil || !strings.Contains(out, "!fatimage: rpm_urls[0]: sha256 mismatch: want "+strings.Repeat("1", 64)+", got "+sha(data)+" (u); nothing installed") {
		t.Errorf("wrong sha256: %v\n%s", err, out)
	}
	out, err = check(sha(data), 1)
	if err == nil || !strings.Contains(out, "!fatimage: rpm_urls[0] (u): the package is not signed: set disable_gpg_check = true to install it unchecked; nothing installed") {
		t.Errorf("unsigned under gpgcheck: %v\n%s", err, out)
	}
	for _, sum := range []string{sha(data), ""} { // pinned, and insecure_skip_checksum
		out, err = check(sum, 0)
		got, perr := rpms.ParseFetched(out, 1)
		if err != nil || perr != nil || got[0].NVR != "prometheus-slurm-exporter-0.22-1" || got[0].Name != "prometheus-slurm-exporter" || got[0].SHA256 != sha(data) {
			t.Errorf("sum %q: %v %v %+v\n%s", sum, err, perr, got, out)
		}
	}
	if err := os.WriteFile(file, []byte("not an rpm"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := check("", 0); err == nil || !strings.Contains(out, "the file is not an RPM package; nothing installed") {
		t.Errorf("not an rpm: %v\n%s", err, out)
	}
}

// pluginZip is a plugin zip as grafana.com serves them: one top directory.
func pluginZip(t *testing.T, id, version string) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, body := range map[string]string{
		id + "/plugin.json":                `{"id":"` + id + `","info":{"version":"` + version + `"}}`,
		id + "/gpx_" + id + "_linux_amd64": "#!/bin/sh\n",
		id + "/img/logo.svg":               "<svg/>",
	} {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		mode := os.FileMode(0o644)
		if strings.Contains(name, "gpx_") {
			mode = 0o755
		}
		h.SetMode(mode)
		w, err := z.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGrafanaPinnedPlugin: the host fetches the zip through its cache
// from the configured URL and uploads it; on the VM the zip is unpacked
// where grafana-cli puts plugins (no grafana-cli run), and a second run
// leaves it alone.
func TestGrafanaPinnedPlugin(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	clearArkEnv(t)
	const id = "grafana-opensearch-datasource"
	zipData := pluginZip(t, id, "2.8.1")
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.RequestURI())
		w.Write(zipData)
	}))
	defer srv.Close()
	var p Provisioner
	if err := p.Prepare(map[string]any{"groups": []string{"grafana"}, "grafana_plugins": []string{"other-panel 1.0.0"}, "content_source": "host",
		"grafana_plugin_url": srv.URL + "/api/plugins/", "grafana_plugin_sha256": map[string]string{id: sha(zipData)}}); err != nil {
		t.Fatal(err)
	}
	pins, unpinned := p.plan.grafanaPins()
	if len(pins) != 1 || strings.Join(unpinned, ",") != "other-panel 1.0.0" {
		t.Fatalf("pins %+v unpinned %q", pins, unpinned)
	}
	if w := p.plan.grafanaWarnings(); len(w) != 1 || !strings.Contains(w[0], "other-panel 1.0.0 have no sha256 in grafana_plugin_sha256: grafana-cli installs them from the VM") {
		t.Errorf("warnings %q", w)
	}
	comm := &recordingComm{uploads: map[string][]byte{}}
	s := &state{cfg: &p.config, plan: p.plan, ui: packersdk.TestUi(t), comm: comm, workDir: "/w"}
	if err := s.uploadCached(context.Background(), pins[0].what(), pins[0].SHA256, pins[0].url(p.config.grafanaPluginURL()), pins[0].staged("/w")); err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || paths[0] != "/api/plugins/"+id+"/versions/2.8.1/download?os=linux&arch=amd64" || !bytes.Equal(comm.uploads["/w/grafana-plugin-"+id+".zip"], zipData) {
		t.Fatalf("fetched %q, uploads %d", paths, len(comm.uploads))
	}

	// on the "VM": unpack twice, with grafana-cli absent
	root, work := t.TempDir(), t.TempDir()
	for round, want := range []string{"installed grafana plugin " + id + " 2.8.1", "unchanged grafana plugin " + id + " 2.8.1"} {
		if err := os.WriteFile(pins[0].staged(work), zipData, 0o600); err != nil {
			t.Fatal(err)
		}
		sc := newScript("grafana-plugins").set("FATIMAGE_SYSROOT", root).call("grafana_plugin_zip", id, "2.8.1", pins[0].staged(work))
		out, err := runLocal(t, work, sc)
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("round %d: %v\n%s", round, err, out)
		}
	}
	dir := filepath.Join(root, "var/lib/grafana/plugins", id)
	if st, err := os.Stat(filepath.Join(dir, "gpx_"+id+"_linux_amd64")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("backend binary: %v %v", st, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "img")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("img dir: %v %v", st, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "plugin.json")); !strings.Contains(string(data), `"version":"2.8.1"`) {
		t.Errorf("plugin.json %s", data)
	}
	// a zip of another version fails, leaving the installed one
	other := pluginZip(t, id, "2.9.0")
	if err := os.WriteFile(pins[0].staged(work), other, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runLocal(t, work, newScript("grafana-plugins").set("FATIMAGE_SYSROOT", root).call("grafana_plugin_zip", id, "2.8.1", pins[0].staged(work)))
	if err == nil || !strings.Contains(out, "the zip's plugin.json is not version 2.8.1") {
		t.Errorf("other version: %v\n%s", err, out)
	}
}
