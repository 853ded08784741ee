package fatimage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/containers"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/rpms"
	"github.com/stackhpc/packer-plugin-fatimage/internal/sbom"
)

// The SBOM starts from the manifest image-json makes: every record the
// SBOM and the report use reads back through internal/sbom.
func TestManifestReadsAsSBOMImage(t *testing.T) {
	m := manifest{
		Image: imageInfo{OSName: "Rocky Linux 9.6 (Blue Onyx)", OSID: "rocky", OSVersion: "9.6", Kernel: "5.14.0-570.58.1.el9_6.x86_64",
			Snapshots: map[string]string{"baseos": "20251106T211545"},
			Binaries:  map[string]imageBinary{"node_exporter": {Version: "1.8.2", SHA256: "ab", Files: []string{"/usr/local/bin/node_exporter"}}},
			Content: &imageContent{
				GrafanaPlugins: map[string]imageDownload{"grafana-piechart-panel": {URL: "https://grafana.example/p.zip", SHA256: "34"}},
				kinds: map[string]any{ // as the kinds record them
					"git":        map[string]git.Record{"/opt/app": {Repo: "https://git.example/app.git", Ref: "v1", Commit: "c0ffee"}},
					"downloads":  map[string]downloads.Record{"/usr/local/bin/tool": {URL: "https://dl.example/tool", SHA256: "cd"}},
					"python":     map[string][]string{"/opt/venv": {"requests==2.32.3"}},
					"rpms":       map[string]rpms.Record{"mlnx-tools": {URL: "https://dl.example/mlnx-tools.rpm", NVR: "mlnx-tools-24.10-1", SHA256: "ef"}},
					"containers": []containers.Record{{Image: "registry.example/slurm:24.05", User: "podman", Digest: "sha256:12"}},
				},
			}},
		Packages: []string{"bash-5.1.8-9.el9.x86_64", "gpg-pubkey-350d275d-6279464b", "mlnx-tools-24.10-1.x86_64"},
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	img, err := sbom.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]bool{
		"os":         img.OS == "Rocky Linux 9.6 (Blue Onyx)" && img.OSID == "rocky" && img.OSVersion == "9.6" && img.Kernel == m.Image.Kernel,
		"snapshots":  img.Snapshots["baseos"] == "20251106T211545",
		"binaries":   img.Binaries["node_exporter"].SHA256 == "ab",
		"git":        img.Git["/opt/app"].Commit == "c0ffee",
		"downloads":  img.Downloads["/usr/local/bin/tool"].SHA256 == "cd" && img.Downloads["grafana plugin grafana-piechart-panel"].SHA256 == "34",
		"python":     len(img.Python["/opt/venv"]) == 1 && img.Python["/opt/venv"][0].Version == "2.32.3",
		"containers": len(img.Containers) == 1 && img.Containers[0].Digest == "sha256:12",
		"rpms":       len(img.RPMs) == 3 && img.RPMs[2].URL == "https://dl.example/mlnx-tools.rpm" && img.RPMs[2].SHA256 == "ef" && img.RPMs[1].Arch == "(none)",
	}
	for k, ok := range checks {
		if !ok {
			t.Errorf("%s not read back: %+v", k, img)
		}
	}
}

func TestPrepareSBOMOptions(t *testing.T) {
	clearArkEnv(t)
	dir := t.TempDir()
	ok := map[string]any{"repos": []any{goodRepo()}, "sbom_output": filepath.Join(dir, "sbom.json"),
		"change_report_output": filepath.Join(dir, "changes.md"), "previous_manifest": "https://ci.example/last/sbom.json"}
	var p Provisioner
	if err := p.Prepare(ok); err != nil {
		t.Fatal(err)
	}
	if reportJSONPath(filepath.Join(dir, "changes.md")) != filepath.Join(dir, "changes.json") {
		t.Error("the JSON report does not go beside the Markdown one")
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for field, c := range map[string]struct {
		value any
		want  string
	}{
		"sbom_output":          {filepath.Join(dir, "missing", "sbom.json"), "sbom_output: the directory of"},
		"change_report_output": {filepath.Join(dir, "adir"), "is a directory"},
		"previous_manifest":    {"s3://bucket/sbom.json", "previous_manifest: \"s3://bucket/sbom.json\" is neither a local path nor an http(s) URL"},
	} {
		raw := map[string]any{"repos": []any{goodRepo()}, field: c.value}
		var p Provisioner
		if err := p.Prepare(raw); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s = %v: %v, want %q", field, c.value, err, c.want)
		}
	}
	var p2 Provisioner
	if err := p2.Prepare(map[string]any{"repos": []any{goodRepo()}, "change_report_output": filepath.Join(dir, "r.json")}); err == nil || !strings.Contains(err.Error(), "ends in .json") {
		t.Errorf("change_report_output = r.json: %v", err)
	}
}

func TestGeneratedString(t *testing.T) {
	s := &state{generated: map[string]any{"SourceImageName": "Rocky-9", "ImageName": "Build_ImageName. To set this dynamically in the Packer template, you must use the `build` function"}}
	if s.generatedString("SourceImageName") != "Rocky-9" || s.generatedString("ImageName") != "" || s.generatedString("Nope") != "" {
		t.Error("generated data: want the real values only")
	}
}
