package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/sbom"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// checkFatSBOM holds a fat build's sbom_output to the booted image: its
// RPMs are exactly what rpm -qa lists there, it is the image's own
// /var/lib/image/sbom.cdx.json, it names the source image the builder
// started from, and it carries every binary's sha256 of the manifest.
func checkFatSBOM(t *testing.T, c *labtest.Client, file string, man fatManifest) {
	t.Helper()
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("sbom_output: %v", err)
	}
	img, err := sbom.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range img.RPMs {
		got = append(got, r.Name+"-"+r.Version+"-"+r.Release+"."+r.Arch)
	}
	slices.Sort(got)
	want := strings.Split(c.Run(t, "rpm -qa --qf '%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\\n' | LC_ALL=C sort"), "\n")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the SBOM lists %d packages, rpm -qa in the booted image %d:\nSBOM %v\nrpm  %v", len(got), len(want), got, want)
	}
	if onImage := c.Run(t, "cat /var/lib/image/sbom.cdx.json"); onImage != strings.TrimSpace(string(doc)) {
		t.Error("the image's /var/lib/image/sbom.cdx.json is not sbom_output")
	}
	if img.SourceImage.ID == "" || img.SourceImage.Name == "" {
		t.Errorf("the SBOM names no source image: %+v", img.SourceImage)
	}
	for name, b := range man.Image.Binaries {
		if img.Binaries[name].SHA256 != b.SHA256 || b.SHA256 == "" {
			t.Errorf("binary %s: SBOM sha256 %q, manifest %q", name, img.Binaries[name].SHA256, b.SHA256)
		}
	}
	if img.Kernel != man.Image.Kernel || img.Snapshots["baseos"] != man.Image.Snapshots["baseos"] {
		t.Errorf("SBOM kernel %q snapshots %v; manifest %q %v", img.Kernel, img.Snapshots, man.Image.Kernel, man.Image.Snapshots)
	}
}
