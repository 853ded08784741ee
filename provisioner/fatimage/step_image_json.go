package fatimage

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
)

// imageInfo is /var/lib/image/image.json: every key the appliance's
// cleanup.yml writes (branch .. slurm-ohpc, with its value rules; see
// applianceKeys) plus ours.
type imageInfo struct {
	Branch    string `json:"branch"`
	Build     string `json:"build"`
	Commit    string `json:"commit"`
	CUDA      string `json:"cuda"`
	DOCA      string `json:"doca"`
	OFED      string `json:"ofed"`
	SlurmOHPC string `json:"slurm-ohpc"`
	// OS is the appliance's "<distribution> <version>", e.g. "Rocky 9.6";
	// OSName is /etc/os-release's PRETTY_NAME.
	OS            string            `json:"os"`
	OSName        string            `json:"os_name"`
	OSID          string            `json:"os_id"`
	OSVersion     string            `json:"os_version"`
	Kernel        string            `json:"kernel"`
	Snapshots     map[string]string `json:"snapshots"`
	SnapshotID    string            `json:"snapshot_id,omitempty"`
	PackageCount  int               `json:"package_count"`
	PackageDigest string            `json:"package_digest"`
	Groups        []string          `json:"groups,omitempty"`
	// InventoryGroups are the build host's groups when `inventory` or
	// `inventory_groups` is set.
	InventoryGroups []string               `json:"inventory_groups,omitempty"`
	Binaries        map[string]imageBinary `json:"binaries,omitempty"`
	// Content is what the content kinds put in the image (content.go).
	Content *imageContent `json:"content,omitempty"`
	// Appliance is what of the site's fatimage.yml ran natively and what
	// through Ansible, with appliance_environment.
	Appliance     *applianceRecord `json:"appliance,omitempty"`
	BuildStarted  string           `json:"build_started"`
	BuildFinished string           `json:"build_finished"`
	Builder       string           `json:"builder"`
}

type imageBinary struct {
	Version string   `json:"version"`
	SHA256  string   `json:"sha256"`
	Files   []string `json:"files"`
}

type manifest struct {
	Image    imageInfo `json:"image"`
	Packages []string  `json:"packages"`
	DNFRuns  int       `json:"dnf_runs"`
	Reboots  int       `json:"reboots"`
	Reboot   rebootLog `json:"reboot"`
}

// rebootLog says whether the build rebooted and why, and what would want
// a reboot the build left to the image's first boot.
type rebootLog struct {
	Rebooted bool     `json:"rebooted"`
	Why      []string `json:"why"`
	Pending  []string `json:"pending_at_snapshot"`
}

// facts runs scripts/facts.sh and parses its output.
func (s *state) facts(ctx context.Context) (map[string]string, []string, error) {
	out, err := s.runScriptQuiet(ctx, "facts", newScript("facts"))
	if err != nil {
		return nil, nil, err
	}
	head, pkgs, _ := strings.Cut(out, "--packages--\n")
	f := map[string]string{}
	for _, l := range strings.Split(head, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			f[k] = v
		}
	}
	return f, strings.Fields(pkgs), nil
}

// stepImageJSON writes /var/lib/image/image.json and the manifest.
func stepImageJSON(ctx context.Context, s *state) error {
	s.say("image.json")
	f, pkgs, err := s.facts(ctx)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(f["package_count"]))
	info := imageInfo{
		OSName: f["os"], OSID: f["os_id"], OSVersion: f["os_version"], Kernel: f["kernel"],
		Snapshots: map[string]string{}, PackageCount: n, PackageDigest: f["package_digest"],
		Groups: s.plan.setNames, InventoryGroups: s.plan.hostGroups, BuildStarted: s.started.Format(time.RFC3339),
		BuildFinished: time.Now().UTC().Format(time.RFC3339), Builder: "packer-plugin-fatimage",
		Content: s.imageContentRecord(), Appliance: s.applianceRecord(),
	}
	applianceKeys(&info, f, hostGitDir(s.cfg))
	for _, b := range s.plan.binaries {
		if info.Binaries == nil {
			info.Binaries = map[string]imageBinary{}
		}
		info.Binaries[b.Name] = imageBinary{Version: b.Version, SHA256: strings.ToLower(b.SHA256), Files: b.Files}
	}
	var refs []pulp.SnapshotRef
	for _, r := range s.plan.repos {
		refs = append(refs, pulp.SnapshotRef{Name: r.Name, Path: r.Path, Timestamp: r.Timestamp})
		key := r.RepoName
		if r.Name != "" {
			key = r.Name
		}
		info.Snapshots[key] = snapshotTimestamp(r)
	}
	if len(refs) > 0 {
		info.SnapshotID = pulp.SnapshotID(refs) // the data source's snapshot_id for the same repos
	}
	data, err := niceJSON(info)
	if err != nil {
		return err
	}
	sc := newScript("image-json")
	if err := s.stage(sc, staged{"image.json", data}); err != nil {
		return err
	}
	if _, err := s.runScript(ctx, sc.call("install_image_json")); err != nil {
		return err
	}
	m := manifest{Image: info, Packages: pkgs, DNFRuns: s.dnfRuns, Reboots: s.reboots,
		Reboot: rebootLog{Rebooted: s.reboots > 0, Why: orEmpty(s.rebooted), Pending: orEmpty(s.pending)}}
	s.manifest = &m
	if s.cfg.ManifestOutput != "" {
		data, _ := json.MarshalIndent(m, "", "  ")
		if err := os.WriteFile(s.cfg.ManifestOutput, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("manifest_output: %w", err)
		}
	}
	return nil
}

// orEmpty is l, or an empty list (JSON [] rather than null).
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
