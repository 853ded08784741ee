// Package fatimage is the `fatimage` provisioner: it swaps a Rocky Linux
// build VM to pinned repository snapshots, updates it, reboots when
// needed, installs package sets in one dnf transaction, creates users with
// fixed ids, uploads files, cleans up and disables the repositories again.
package fatimage

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2/hcldec"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/template/interpolate"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
)

// Provisioner implements packersdk.Provisioner.
type Provisioner struct {
	config Config

	// state of one Provision run
	ui        packersdk.Ui
	comm      packersdk.Communicator
	workDir   string
	loginUser string
	dnfRuns   int
	reboots   int
	seq       int
}

var _ packersdk.Provisioner = (*Provisioner)(nil)

// ConfigSpec implements packersdk.Provisioner.
func (p *Provisioner) ConfigSpec() hcldec.ObjectSpec { return p.config.FlatMapstructure().HCL2Spec() }

// Prepare implements packersdk.Provisioner.
func (p *Provisioner) Prepare(raws ...any) error {
	if err := p.config.Prepare(raws...); err != nil {
		return err
	}
	if p.config.RepoPassword != "" {
		packersdk.LogSecretFilter.Set(p.config.RepoPassword)
	}
	return nil
}

// Provision implements packersdk.Provisioner.
func (p *Provisioner) Provision(ctx context.Context, ui packersdk.Ui, comm packersdk.Communicator, _ map[string]any) error {
	p.ui, p.comm, p.dnfRuns, p.reboots = ui, comm, 0, 0
	c := &p.config
	started := time.Now().UTC()

	sets := c.sets
	modules := appendUnique(slices.Clone(sets.Modules), c.ModuleStreams...)
	install := appendUnique(slices.Clone(sets.Packages), c.Packages...)
	remove := appendUnique(slices.Clone(sets.Remove), c.RemovePackages...)
	plugins := appendUnique(slices.Clone(sets.GrafanaPlugins), c.GrafanaPlugins...)
	services := appendUnique(slices.Clone(sets.Services), c.DisableServices...)
	// a group's repos (grafana) are enabled for the install only when
	// configured: dnf fails on an unknown --enablerepo
	installRepos := slices.Clone(c.EnableRepos)
	for _, r := range sets.EnableRepos {
		for _, cr := range c.repos {
			if cr.RepoName == r {
				installRepos = appendUnique(installRepos, r)
			}
		}
	}

	out, err := p.runPlain(ctx, "id -un")
	if err != nil {
		return fmt.Errorf("finding the login user: %w", err)
	}
	p.loginUser = strings.TrimSpace(out)
	if err := p.makeWorkDir(ctx); err != nil {
		return err
	}

	ui.Say("fatimage: repositories")
	if err := p.stepRepos(ctx); err != nil {
		return err
	}
	// Binaries are fetched and verified before any package work, so a
	// bad checksum fails the build in seconds, not after the update.
	if len(c.binaries) > 0 {
		ui.Say(fmt.Sprintf("fatimage: fetching %d binaries (binary_source = %s)", len(c.binaries), c.BinarySource))
		if err := p.stepFetchBinaries(ctx); err != nil {
			return err
		}
	}

	rebootNeeded := false
	if c.SELinux != "unchanged" {
		ui.Say("fatimage: SELinux " + c.SELinux)
		out, err := p.runScript(ctx, "selinux", scriptSELinux(c.SELinux))
		if err != nil {
			return err
		}
		rebootNeeded = rebootNeeded || strings.Contains(out, "REBOOT-NEEDED")
	}
	if *c.Update {
		ui.Say("fatimage: dnf update")
		out, err := p.runScript(ctx, "update", scriptUpdate(c.UpdateExclude, c.EnableRepos))
		if err != nil {
			return err
		}
		rebootNeeded = rebootNeeded || strings.Contains(out, "REBOOT-NEEDED")
	}
	if c.Reboot == "always" || (c.Reboot == "auto" && rebootNeeded) {
		ui.Say("fatimage: reboot")
		if err := p.reboot(ctx); err != nil {
			return err
		}
	} else if rebootNeeded {
		ui.Say("fatimage: a reboot is needed but reboot = \"never\"")
	}

	if *c.MoveLoginHome {
		home := c.LoginHome
		if home == "" {
			home = "/var/lib/" + p.loginUser
		}
		ui.Say("fatimage: login user's home")
		if _, err := p.runScript(ctx, "login-home", scriptLoginHome(home)); err != nil {
			return err
		}
	}
	if len(c.users) > 0 {
		ui.Say("fatimage: users")
		if _, err := p.runScript(ctx, "users", scriptUsers(c.users)); err != nil {
			return err
		}
	}
	if len(modules)+len(install)+len(remove) > 0 {
		ui.Say(fmt.Sprintf("fatimage: packages (%d module streams, %d to install, %d to remove)", len(modules), len(install), len(remove)))
		s, _ := scriptPackages(modules, install, remove, c.Exclude, installRepos, c.InstallWeakDeps)
		if _, err := p.runScript(ctx, "packages", s); err != nil {
			return err
		}
	}
	if len(plugins) > 0 {
		ui.Say("fatimage: grafana plugins")
		if _, err := p.runScript(ctx, "grafana-plugins", scriptGrafanaPlugins(plugins)); err != nil {
			return err
		}
	}
	if len(services) > 0 {
		ui.Say("fatimage: services left stopped and disabled")
		if _, err := p.runScript(ctx, "services", scriptDisableServices(services)); err != nil {
			return err
		}
	}
	if len(c.binaries) > 0 {
		ui.Say("fatimage: installing binaries")
		if _, err := p.runScript(ctx, "binaries", scriptInstallBinaries(c.binaries, p.workDir)); err != nil {
			return err
		}
	}
	if len(c.Files) > 0 {
		ui.Say("fatimage: files")
		if err := p.stepFiles(ctx); err != nil {
			return err
		}
	}
	if *c.Cleanup {
		ui.Say("fatimage: cleanup")
		if s := scriptCleanup(c.SkipCleanupSteps, false); s != "" {
			if _, err := p.runScript(ctx, "cleanup", s); err != nil {
				return err
			}
		}
	}
	if *c.DisableRepos {
		ui.Say("fatimage: disabling repositories")
		if err := p.stepDisableRepos(ctx); err != nil {
			return err
		}
	}
	ui.Say("fatimage: image.json")
	if err := p.stepImageJSON(ctx, started); err != nil {
		return err
	}
	ui.Say(fmt.Sprintf("fatimage: done: %d dnf command(s), %d reboot(s)", p.dnfRuns, p.reboots))
	// Last: remove the work dir and, if asked, the keys SSH needs.
	final := ""
	if *c.Cleanup {
		final = scriptCleanup(c.SkipCleanupSteps, true)
	}
	if _, err := p.runScript(ctx, "final", final+scriptUnlinkOldHome+"rm -rf \"$FATIMAGE_WORKDIR\"\n"); err != nil {
		return err
	}
	return nil
}

// DNFRuns is how many dnf commands the last Provision ran; Reboots how
// many reboots it did.
func (p *Provisioner) DNFRuns() int { return p.dnfRuns }
func (p *Provisioner) Reboots() int { return p.reboots }

func appendUnique(l []string, add ...string) []string {
	seen := map[string]bool{}
	for _, s := range l {
		seen[s] = true
	}
	for _, s := range add {
		if !seen[s] {
			seen[s] = true
			l = append(l, s)
		}
	}
	return l
}

func (p *Provisioner) makeWorkDir(ctx context.Context) error {
	if p.workDir == "" {
		var b [6]byte
		rand.Read(b[:])
		p.workDir = path.Join(p.config.RemoteFolder, "fatimage-"+hex.EncodeToString(b[:]))
	}
	// private to the login user: uploaded files may carry credentials
	_, err := p.runPlain(ctx, "umask 077 && mkdir -p "+shQuote(p.workDir)+" && chmod 0700 "+shQuote(p.workDir))
	return err
}

func (p *Provisioner) upload(dst string, content []byte) error {
	return p.comm.Upload(dst, bytes.NewReader(content), nil)
}

// staged is a file put into the work dir for a step's script.
type staged struct {
	Name string // relative to the work dir
	Data []byte
}

// stage uploads files into the work dir as one tar archive (one SSH
// session however many files) and returns the script lines unpacking it;
// they are 0600, like everything in the private work dir.
func (p *Provisioner) stage(files ...staged) (string, error) {
	if len(files) == 0 {
		return "", nil
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.Name, Mode: 0o600, Size: int64(len(f.Data)), Typeflag: tar.TypeReg}); err != nil {
			return "", err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	p.seq++
	bundle := path.Join(p.workDir, fmt.Sprintf("%02d-files.tar", p.seq))
	if err := p.upload(bundle, buf.Bytes()); err != nil {
		return "", fmt.Errorf("uploading %s: %w", files[0].Name, err)
	}
	return fmt.Sprintf("tar -xf %s -C \"$FATIMAGE_WORKDIR\" --no-same-owner && rm -f %s\n", shQuote(bundle), shQuote(bundle)), nil
}

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
	tmp := path.Join(p.workDir, "image.json")
	if err := p.upload(tmp, append(data, '\n')); err != nil {
		return err
	}
	if _, err := p.runScript(ctx, "image-json", fmt.Sprintf("install -D -o root -g root -m 0644 %s /var/lib/image/image.json\nrm -f %s\n", shQuote(tmp), shQuote(tmp))); err != nil {
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

// tailBuffer keeps everything written, for the tail on failure.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.Write(b)
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errCmd is a remote command that failed.
type errCmd struct {
	Step, Command string
	Status        int
	Tail          string
}

func (e *errCmd) Error() string {
	what := fmt.Sprintf("exited with status %d", e.Status)
	if e.Status == packersdk.CmdDisconnect {
		what = "was cut off: the SSH connection to the VM was lost (it rebooted, was reset or stopped)"
	}
	msg := fmt.Sprintf("fatimage %s: %s %s; last output:\n%s", e.Step, e.Command, what, e.Tail)
	if refusedCredentials(e.Tail) {
		msg += "\nthe repository refused the credentials: check repo_username and repo_password (or ARK_USERNAME and ARK_PASSWORD)"
	}
	return msg
}

// refusedCredentials reports whether dnf output shows a repository
// answering 401 or 403.
func refusedCredentials(out string) bool {
	return strings.Contains(out, "Status code: 401") || strings.Contains(out, "Status code: 403")
}

// run starts command and waits, returning stdout; stderr and stdout both
// feed the failure tail.
func (p *Provisioner) run(ctx context.Context, step, command string, stream bool) (string, error) {
	return p.runShown(ctx, step, command, command, stream)
}

// runShown is run naming the command as shown in errors.
func (p *Provisioner) runShown(ctx context.Context, step, command, shown string, stream bool) (string, error) {
	var stdout, both tailBuffer
	var outW, errW io.Writer = io.MultiWriter(&stdout, &both), &both
	if stream && p.ui != nil {
		outW = io.MultiWriter(outW, &uiWriter{ui: p.ui, redact: p.redact})
		errW = io.MultiWriter(errW, &uiWriter{ui: p.ui, redact: p.redact})
	}
	cmd := &packersdk.RemoteCmd{Command: command, Stdout: outW, Stderr: errW}
	if err := p.comm.Start(ctx, cmd); err != nil {
		return "", fmt.Errorf("fatimage %s: starting %q: %w", step, shown, err)
	}
	done := make(chan int, 1)
	go func() { done <- cmd.Wait() }()
	var status int
	select {
	case status = <-done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	p.dnfRuns += countDNF(both.String())
	if status != 0 {
		all := p.redact(both.String())
		e := &errCmd{Step: step, Command: shown, Status: status, Tail: tail(all, 20)}
		if failing := failingCommand(all); failing != "" {
			e.Command = failing
		}
		return stdout.String(), e
	}
	return stdout.String(), nil
}

func (p *Provisioner) runPlain(ctx context.Context, command string) (string, error) {
	return p.run(ctx, "command", command, false)
}

// runScript uploads script into the work dir and runs it with
// execute_command. Failures name the failing command inside the script.
func (p *Provisioner) runScript(ctx context.Context, step, script string) (string, error) {
	return p.runScriptMode(ctx, step, script, true)
}

func (p *Provisioner) runScriptQuiet(ctx context.Context, step, script string) (string, error) {
	return p.runScriptMode(ctx, step, script, false)
}

// inlineScriptMax is the largest script sent inside the command itself;
// larger ones are uploaded first (a second SSH session).
const inlineScriptMax = 64 << 10

func (p *Provisioner) runScriptMode(ctx context.Context, step, script string, stream bool) (string, error) {
	p.seq++
	remote := path.Join(p.workDir, fmt.Sprintf("%02d-%s.sh", p.seq, step))
	full := scriptPrelude(p.workDir, p.loginUser) + script
	cmd, err := p.executeCommand(remote)
	if err != nil {
		return "", err
	}
	// One session per step: the script (never a secret: those travel as
	// uploaded files) is written by the command that runs it.
	remoteCmd := cmd
	if len(full) <= inlineScriptMax {
		remoteCmd = fmt.Sprintf("umask 077 && printf %%s %s | base64 -d > %s && %s",
			base64.StdEncoding.EncodeToString([]byte(full)), shQuote(remote), cmd)
	} else if err := p.upload(remote, []byte(full)); err != nil {
		return "", fmt.Errorf("fatimage %s: uploading script: %w", step, err)
	}
	return p.runShown(ctx, step, remoteCmd, cmd, stream)
}

// scriptPrelude sets the environment and defines fatimage_run, which
// prints a marker line with the command to stderr before running it so a
// failure can name the failing command.
func scriptPrelude(workDir, loginUser string) string {
	return fmt.Sprintf("export LC_ALL=C\nexport FATIMAGE_WORKDIR=%s FATIMAGE_LOGIN_USER=%s\nfatimage_run() { printf '+fatimage: %%s\\n' \"$*\" >&2; \"$@\"; }\n", shQuote(workDir), shQuote(loginUser))
}

// failingCommand returns the last traced command in out.
func failingCommand(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if isTrace(lines[i]) {
			return strings.TrimPrefix(strings.TrimLeft(lines[i], "+"), "fatimage: ")
		}
	}
	return ""
}

// redact hides the repository password in remote output (dnf prints it
// when it dumps a repository's configuration).
func (p *Provisioner) redact(s string) string {
	if pw := p.config.RepoPassword; pw != "" {
		s = strings.ReplaceAll(s, pw, "<sensitive>")
	}
	return s
}

// countDNF counts the dnf commands a script ran, from their markers.
func countDNF(out string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if isTrace(l) && strings.HasPrefix(strings.TrimPrefix(strings.TrimLeft(l, "+"), "fatimage: "), "dnf ") {
			n++
		}
	}
	return n
}

// isTrace reports whether line is an xtrace line of our scripts (nested
// levels repeat the leading +).
func isTrace(line string) bool {
	return strings.HasPrefix(line, "+") && strings.HasPrefix(strings.TrimLeft(line, "+"), "fatimage: ")
}

func (p *Provisioner) executeCommand(remote string) (string, error) {
	ictx := p.config.ctx
	ictx.Data = map[string]string{"Path": remote}
	return interpolate.Render(p.config.ExecuteCommand, &ictx)
}

// uiWriter writes whole lines to the ui, hiding trace lines.
type uiWriter struct {
	ui     packersdk.Ui
	redact func(string) string
	mu     sync.Mutex
	buf    []byte
}

func (w *uiWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if !isTrace(line) {
			w.ui.Message(w.redact(strings.TrimRight(line, "\r")))
		}
	}
	return len(b), nil
}
