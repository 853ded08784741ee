package sbom

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// fullImage has one item of every kind.
func fullImage() *Image {
	return &Image{
		Name: "rocky-fat", OS: "Rocky Linux 9.6 (Blue Onyx)", OSID: "rocky", OSVersion: "9.6",
		Kernel: "5.14.0-570.58.1.el9_6.x86_64", SourceImage: Source{ID: "b1d6", Name: "Rocky-9-GenericCloud-Base-9.6"},
		Snapshots: map[string]string{"baseos": "20251106T211545", "epel": "20251106T211545"},
		RPMs: []RPM{
			{Name: "bash", EVR: EVR{"0", "5.1.8", "9.el9"}, Arch: "x86_64", License: "GPLv3+", Repo: "baseos"},
			{Name: "librados2", EVR: EVR{"2", "18.2.4", "1.el9"}, Arch: "x86_64", License: "LGPL-2.1-only", Repo: "ceph"},
			{Name: "kernel-core", EVR: EVR{"0", "5.14.0", "570.58.1.el9_6"}, Arch: "x86_64", License: "GPL-2.0-only", Repo: "baseos"},
			{Name: "gpg-pubkey", EVR: EVR{"0", "350d275d", "6279464b"}, Arch: "(none)", License: "pubkey", Summary: "Rocky Enterprise Software Foundation - Release key 2022 <releng@rockylinux.org> public key"},
			{Name: "mlnx-tools", EVR: EVR{"0", "24.10", "0.2410068"}, Arch: "x86_64", License: "GPLv2 or BSD", Repo: "@commandline",
				URL: "https://example.org/mlnx-tools-24.10.rpm", SHA256: strings.Repeat("ab", 32)},
		},
		Containers: []Container{{Image: "registry.example.org:5000/ohpc/slurm:24.05", User: "podman", Digest: "sha256:" + strings.Repeat("cd", 32)}},
		Python:     map[string][]PyDist{"/opt/venv": {{Name: "Requests", Version: "2.32.3"}, {Name: "urllib3", Version: "2.2.1"}}},
		Git:        map[string]Git{"/opt/ood/apps/jupyter": {Repo: "https://github.com/example/jupyter.git", Ref: "v1.2", Commit: strings.Repeat("1a", 20)}},
		Downloads:  map[string]File{"/usr/local/bin/tool": {URL: "https://example.org/tool-1.0", SHA256: strings.Repeat("ef", 32)}},
		Binaries:   map[string]Binary{"node_exporter": {Version: "1.8.2", SHA256: strings.Repeat("0f", 32), Files: []string{"/usr/local/bin/node_exporter"}}},
		Users:      []User{{Name: "root", UID: "0", GID: "0", Home: "/root", Shell: "/bin/bash"}, {Name: "slurm", UID: "202", GID: "202", Home: "/var/lib/slurm", Shell: "/sbin/nologin"}},
	}
}

func TestCycloneDXRoundTrip(t *testing.T) {
	img := fullImage()
	doc, err := CycloneDX(img, Tool{Name: "packer-plugin-fatimage", Version: "1.0.0"}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, img) {
		a, _ := json.MarshalIndent(img, "", " ")
		b, _ := json.MarshalIndent(back, "", " ")
		t.Errorf("read back differs:\nwrote %s\nread %s", a, b)
	}
	var raw struct {
		SpecVersion string `json:"specVersion"`
		Components  []struct {
			Purl string `json:"purl"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil || raw.SpecVersion != "1.6" {
		t.Fatalf("specVersion %q, %v", raw.SpecVersion, err)
	}
	for _, want := range []string{
		"pkg:rpm/rocky/bash@5.1.8-9.el9?arch=x86_64&repository_id=baseos",
		"pkg:rpm/rocky/librados2@18.2.4-1.el9?arch=x86_64&epoch=2&repository_id=ceph",
		"pkg:oci/slurm@sha256:" + strings.Repeat("cd", 32) + "?repository_url=registry.example.org:5000%2Fohpc%2Fslurm",
		"pkg:pypi/requests@2.32.3",
		"pkg:generic/jupyter@" + strings.Repeat("1a", 20) + "?vcs_url=git%2Bhttps:%2F%2Fgithub.com%2Fexample%2Fjupyter.git%40" + strings.Repeat("1a", 20),
	} {
		found := false
		for _, c := range raw.Components {
			found = found || c.Purl == want
		}
		if !found {
			t.Errorf("no component with purl %s", want)
		}
	}
}

// validator is the independent CycloneDX validator scripts/sbom-validator.sh
// installs: ajv-cli and the schemas @cyclonedx/cyclonedx-library ships.
func validator(t *testing.T) (ajv, schemas string) {
	t.Helper()
	dir := os.Getenv("FATIMAGE_NPM_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "fatimage-npm")
	}
	ajv = filepath.Join(dir, "node_modules", ".bin", "ajv")
	schemas = filepath.Join(dir, "node_modules", "@cyclonedx", "cyclonedx-library", "res", "schema")
	if _, err := os.Stat(ajv); err != nil {
		needs.Unavailable(t, "the CycloneDX validator (run scripts/sbom-validator.sh): "+err.Error())
	}
	needs.Tools(t, "node")
	return ajv, schemas
}

// validate runs ajv over doc with the CycloneDX 1.6 schema. The library
// ships its schemas as *.SNAPSHOT.schema.json, referring to each other by
// those names while their $id keep the published names: the copies
// given to ajv have their $id renamed to match, nothing else changed.
func validate(t *testing.T, doc []byte) (string, error) {
	t.Helper()
	ajv, schemas := validator(t)
	tmp := t.TempDir()
	args := []string{"validate", "--spec=draft7", "--strict=false", "-c", "ajv-formats"}
	for _, f := range []struct{ file, id string }{
		{"bom-1.6.SNAPSHOT.schema.json", ""},
		{"spdx.SNAPSHOT.schema.json", "spdx.schema.json"},
		{"jsf-0.82.SNAPSHOT.schema.json", "jsf-0.82.schema.json"},
	} {
		data, err := os.ReadFile(filepath.Join(schemas, f.file))
		if err != nil {
			t.Fatal(err)
		}
		if f.id != "" {
			data = []byte(strings.Replace(string(data), "/schema/"+f.id+`"`, "/schema/"+f.file+`"`, 1))
			args = append(args, "-r", filepath.Join(tmp, f.file))
		} else {
			args = append(args, "-s", filepath.Join(tmp, f.file))
		}
		if err := os.WriteFile(filepath.Join(tmp, f.file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "bom.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ajv, append(args, "-d", filepath.Join(tmp, "bom.json"))...)
	cmd.Dir = filepath.Dir(filepath.Dir(filepath.Dir(ajv))) // where ajv-formats is installed
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestSchemaValid(t *testing.T) {
	doc, err := CycloneDX(fullImage(), Tool{Name: "packer-plugin-fatimage", Version: "1.0.0"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := validate(t, doc); err != nil {
		t.Fatalf("the CycloneDX 1.6 schema refuses the SBOM: %v\n%s", err, out)
	}
	// and the validator does refuse: an unknown component type
	bad := strings.Replace(string(doc), `"type": "container"`, `"type": "vm-image"`, 1)
	if out, err := validate(t, []byte(bad)); err == nil {
		t.Fatalf("the validator accepted an invalid SBOM:\n%s", out)
	}
}
