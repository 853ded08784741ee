package fatimage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/packer-plugin-sdk/packerbuilderdata"

	"github.com/stackhpc/packer-plugin-fatimage/internal/sbom"
	"github.com/stackhpc/packer-plugin-fatimage/version"
)

// The SBOM and the change report (issue #29): what image-json recorded
// plus the image's rpm database, users and venvs (scripts/sbom.sh).

func wantsSBOM(s *state) bool {
	c := s.cfg
	return c.SBOMOutput != "" || c.PreviousManifest != "" || c.ChangeReportOutput != ""
}

// stepSBOM writes the SBOM on the VM (scripts/sbom.sh install_sbom:
// /var/lib/image/sbom.cdx.json, where Packer's hcp-sbom provisioner can
// upload it from) and to sbom_output, and the change
// report to change_report_output, with its summary in the build output.
func stepSBOM(ctx context.Context, s *state) error {
	s.say("sbom and change report")
	img, err := s.imageRecord(ctx)
	if err != nil {
		return err
	}
	doc, err := sbom.CycloneDX(img, sbom.Tool{Name: "packer-plugin-fatimage", Version: version.PluginVersion.String()}, time.Now())
	if err != nil {
		return err
	}
	sc := newScript("sbom")
	if err := s.stage(sc, staged{"sbom.cdx.json", doc}); err != nil {
		return err
	}
	if _, err := s.runScript(ctx, sc.call("install_sbom")); err != nil {
		return err
	}
	if out := s.cfg.SBOMOutput; out != "" {
		if err := os.WriteFile(out, doc, 0o644); err != nil {
			return fmt.Errorf("sbom_output: %w", err)
		}
	}
	rep, err := s.changeReport(ctx, img)
	if err != nil {
		return err
	}
	for _, l := range strings.Split(strings.TrimSpace(rep.Summary()), "\n") {
		s.say("changes: " + l)
	}
	return writeReport(s.cfg.ChangeReportOutput, rep)
}

// imageRecord is the manifest image-json made, with the VM's databases.
func (s *state) imageRecord(ctx context.Context) (*sbom.Image, error) {
	data, err := json.Marshal(s.manifest)
	if err != nil {
		return nil, err
	}
	img, err := sbom.ParseManifest(data)
	if err != nil {
		return nil, err
	}
	img.Name = s.generatedString("ImageName")
	img.SourceImage = sbom.Source{ID: s.generatedString("SourceImageID"), Name: s.generatedString("SourceImageName")}
	var venvs []string
	for env := range img.Python {
		venvs = append(venvs, env) // the script skips interpreters (no bin/python)
	}
	slices.Sort(venvs)
	out, err := s.runScriptQuiet(ctx, "sbom-query", newScript("sbom").call("sbom_query", venvs...))
	if err != nil {
		return nil, err
	}
	return img, img.ApplyQuery(out)
}

// generatedString is the builder's generated value, "" when it has none
// yet (Packer's placeholder) or is not a string.
func (s *state) generatedString(key string) string {
	v, _ := s.generated[key].(string)
	if strings.Contains(v, packerbuilderdata.PlaceholderMsg) {
		return ""
	}
	return v
}

// changeReport compares img with previous_manifest; a previous file that
// does not exist (a CI job's first run) is no previous image.
func (s *state) changeReport(ctx context.Context, img *sbom.Image) (*sbom.Report, error) {
	src := s.cfg.PreviousManifest
	if src == "" {
		return sbom.Diff(nil, img, ""), nil
	}
	prev, err := sbom.Load(ctx, src)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, sbom.ErrNotFound) {
		s.say("previous_manifest " + sbom.Display(src) + " does not exist: no previous image to compare with")
		return sbom.Diff(nil, img, ""), nil
	}
	if err != nil {
		return nil, fmt.Errorf("previous_manifest: %w", err)
	}
	return sbom.Diff(prev, img, sbom.Display(src)), nil
}

// writeReport writes the Markdown report to path and the JSON one
// beside it (report.md: report.json).
func writeReport(path string, rep *sbom.Report) error {
	if path == "" {
		return nil
	}
	js, err := rep.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(rep.Markdown()), 0o644); err != nil {
		return fmt.Errorf("change_report_output: %w", err)
	}
	if err := os.WriteFile(reportJSONPath(path), js, 0o644); err != nil {
		return fmt.Errorf("change_report_output: %w", err)
	}
	return nil
}

func reportJSONPath(md string) string {
	return strings.TrimSuffix(md, filepath.Ext(md)) + ".json"
}
