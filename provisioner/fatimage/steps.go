package fatimage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
)

// The provisioner's steps that do more than run one script.

func (p *Provisioner) stepRepos(ctx context.Context) error {
	c := &p.config
	var files []staged
	for i, k := range c.GPGKeys {
		if k.Key != "" {
			files = append(files, staged{fmt.Sprintf("key-%d", i), []byte(k.Key)})
		}
	}
	repoFiles := renderRepoFiles(c.repos, c.RepoUsername, c.RepoPassword, false)
	for _, f := range repoFiles {
		files = append(files, staged{f.Name, []byte(f.Content)})
	}
	unpack, err := p.stage(files...)
	if err != nil {
		return err
	}
	var s strings.Builder
	s.WriteString(unpack)
	s.WriteString(scriptGPGKeys(c.GPGKeys, p.workDir))
	s.WriteString(scriptInstallRepoFiles(repoFiles, p.workDir, *c.ReplaceRepos))
	if *c.ReplaceRepos && len(repoFiles) > 0 {
		var keep []string
		for _, f := range repoFiles {
			keep = append(keep, f.Name)
		}
		s.WriteString(scriptDisableOthers(keep, p.workDir))
	}
	// Load the new repositories' metadata now: wrong credentials or a
	// missing snapshot fail here, before any package work, and the
	// update and install reuse the cache.
	s.WriteString(scriptMakeCache(c.repos))
	if s.Len() == 0 {
		return nil
	}
	_, err = p.runScript(ctx, "repos", s.String())
	return err
}

func (p *Provisioner) stepDisableRepos(ctx context.Context) error {
	c := &p.config
	repoFiles := renderRepoFiles(c.repos, "", "", true)
	files := []staged{{"pw", nil}}
	if c.RepoPassword != "" {
		files[0].Data = []byte(c.RepoPassword + "\n")
	}
	for _, f := range repoFiles {
		files = append(files, staged{f.Name, []byte(f.Content)})
	}
	unpack, err := p.stage(files...)
	if err != nil {
		return err
	}
	var s strings.Builder
	s.WriteString(unpack)
	s.WriteString(scriptInstallRepoFiles(repoFiles, p.workDir, true))
	var keep []string
	for _, f := range repoFiles {
		keep = append(keep, f.Name)
	}
	// package installs may leave .rpmnew/.rpmsave copies of repo files
	s.WriteString("for f in " + repoDir + "/*.rpmnew " + repoDir + "/*.rpmsave; do [ -e \"$f\" ] && rm -f \"$f\" && echo \"removed $f\"; done; true\n")
	s.WriteString(scriptDisableOthers(keep, p.workDir))
	pw := path.Join(p.workDir, "pw")
	s.WriteString(scriptVerifyNoPassword(pw))
	_, err = p.runScript(ctx, "disable-repos", s.String())
	return err
}

func (p *Provisioner) stepFiles(ctx context.Context) error {
	var files []staged
	var place strings.Builder
	for i, f := range p.config.Files {
		st, err := os.Stat(f.Source)
		if err != nil {
			return fmt.Errorf("files[%d]: %w", i, err)
		}
		mode := f.Mode
		if mode == "" {
			mode = "0644"
		}
		var data []byte
		if st.IsDir() {
			data, err = tarDir(f.Source, mode)
		} else {
			data, err = os.ReadFile(f.Source)
		}
		if err != nil {
			return fmt.Errorf("files[%d]: %w", i, err)
		}
		name := fmt.Sprintf("file-%d", i)
		files = append(files, staged{name, data})
		owner, group := "root", "root"
		if f.Owner != "" {
			owner, group, _ = strings.Cut(f.Owner, ":")
			if group == "" {
				group = owner
			}
		}
		place.WriteString(scriptPlaceFile(path.Join(p.workDir, name), f.Destination, owner, group, mode, st.IsDir()))
	}
	unpack, err := p.stage(files...)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	_, err = p.runScript(ctx, "files", unpack+place.String())
	return err
}

// imageInfo is /var/lib/image/image.json.
type imageInfo struct {
	OS            string                 `json:"os"`
	OSID          string                 `json:"os_id"`
	OSVersion     string                 `json:"os_version"`
	Kernel        string                 `json:"kernel"`
	Snapshots     map[string]string      `json:"snapshots"`
	SnapshotID    string                 `json:"snapshot_id,omitempty"`
	PackageCount  int                    `json:"package_count"`
	PackageDigest string                 `json:"package_digest"`
	Groups        []string               `json:"groups,omitempty"`
	Binaries      map[string]imageBinary `json:"binaries,omitempty"`
	Content       *imageContent          `json:"content,omitempty"`
	BuildStarted  string                 `json:"build_started"`
	BuildFinished string                 `json:"build_finished"`
	Builder       string                 `json:"builder"`
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
}

// facts runs scriptFacts and parses its output.
func (p *Provisioner) facts(ctx context.Context) (map[string]string, []string, error) {
	out, err := p.runScriptQuiet(ctx, "facts", scriptFacts)
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

func (p *Provisioner) stepImageJSON(ctx context.Context, started time.Time) error {
	f, pkgs, err := p.facts(ctx)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(f["package_count"]))
	info := imageInfo{
		OS: f["os"], OSID: f["os_id"], OSVersion: f["os_version"], Kernel: f["kernel"],
		Snapshots: map[string]string{}, PackageCount: n, PackageDigest: f["package_digest"],
		Groups: p.config.Groups, BuildStarted: started.Format(time.RFC3339),
		BuildFinished: time.Now().UTC().Format(time.RFC3339), Builder: "packer-plugin-fatimage",
		Content: p.imageContentRecord(),
	}
	for _, b := range p.config.binaries {
		if info.Binaries == nil {
			info.Binaries = map[string]imageBinary{}
		}
		info.Binaries[b.Name] = imageBinary{Version: b.Version, SHA256: strings.ToLower(b.SHA256), Files: b.Files}
	}
	var refs []pulp.SnapshotRef
	for _, r := range p.config.repos {
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
	data, _ := json.MarshalIndent(info, "", "  ")
	unpack, err := p.stage(staged{"image.json", append(data, '\n')})
	if err != nil {
		return err
	}
	tmp := shQuote(path.Join(p.workDir, "image.json"))
	if _, err := p.runScript(ctx, "image-json", unpack+fmt.Sprintf("install -D -o root -g root -m 0644 %s /var/lib/image/image.json\nrm -f %s\n", tmp, tmp)); err != nil {
		return err
	}
	if p.config.ManifestOutput != "" {
		m := manifest{Image: info, Packages: pkgs, DNFRuns: p.dnfRuns, Reboots: p.reboots}
		data, _ := json.MarshalIndent(m, "", "  ")
		if err := os.WriteFile(p.config.ManifestOutput, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("manifest_output: %w", err)
		}
	}
	return nil
}

// reboot reboots the VM and waits until it answers with a new boot id.
func (p *Provisioner) reboot(ctx context.Context) error {
	before, err := p.runPlain(ctx, "cat /proc/sys/kernel/random/boot_id")
	if err != nil {
		return err
	}
	before = strings.TrimSpace(before)
	// The session ends with the reboot: a dropped connection (or a session
	// that never ends, bounded here) is the expected outcome.
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = p.runScript(rctx, "reboot", "echo rebooting\nsystemctl reboot || reboot\n")
	cancel()
	var ce *errCmd
	if err != nil && !(errors.As(err, &ce) && ce.Status == packersdk.CmdDisconnect) && !(errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil) {
		return err
	}
	deadline := time.Now().Add(p.config.RebootTimeout)
	// Poll quickly for a while (a VM can be back in seconds), then every 2s.
	for i := 0; ; i++ {
		wait := 100 * time.Millisecond
		if i >= 100 {
			wait = 2 * time.Second
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reboot: the VM did not come back within reboot_timeout (%s)", p.config.RebootTimeout)
		}
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		out, err := p.runPlain(cctx, "cat /proc/sys/kernel/random/boot_id")
		cancel()
		if err == nil && strings.TrimSpace(out) != "" && strings.TrimSpace(out) != before {
			break
		}
	}
	p.reboots++
	p.ui.Say("fatimage: the VM is back")
	return p.makeWorkDir(ctx)
}
