// Package e2e runs real `packer build`s with the plugin installed against
// the local lab: the builder, provisioner and data source together, as
// users run them.
package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/releases"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

var theLab *lab.Lab

func TestMain(m *testing.M) {
	code := labtest.Main(m, &theLab)
	packertest.Cleanup()
	os.Exit(code)
}

// build runs packer build on templates from testdata (or
// buildtest.FatCommonName), laid out together in one directory by
// buildtest.Layout, with the lab's environment.
func build(t *testing.T, templates []string, args ...string) packertest.Result {
	t.Helper()
	return buildWithin(t, 5*time.Minute, templates, args...)
}

// buildWithin is build with a time bound of its own, for a build of the
// whole appliance: more than five minutes on a loaded machine (beside
// another build); over its bound packer is interrupted and the build fails.
func buildWithin(t *testing.T, bound time.Duration, templates []string, args ...string) packertest.Result {
	t.Helper()
	labtest.Require(t)
	p := packertest.Setup(t)
	dir := t.TempDir()
	buildtest.Layout(t, dir, "testdata", templates...)
	return p.RunWithin(t, bound, dir, theLab.Environ(), append(append([]string{"build"}, args...), ".")...)
}

// sideBySide runs each of runs as a parallel subtest of a group named
// group and returns once all have ended, stopping the test if one failed:
// independent builds of one test share the lab's waits instead of adding
// them up. Each run's leftovers are checked by the caller once all end
// (labtest.RequireClean sees the whole lab, so not inside a run).
func sideBySide(t *testing.T, group string, runs map[string]func(t *testing.T)) {
	t.Helper()
	t.Run(group, func(t *testing.T) {
		for _, name := range sortedKeys(runs) {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runs[name](t)
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
}

// The image and secret helpers are buildtest's, bound to this package's lab.

// labClient is a service client on the lab, as its user.
func labClient(t *testing.T, newClient func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)) *gophercloud.ServiceClient {
	t.Helper()
	provider, err := labtest.Provider(context.Background(), theLab)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newClient(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func imageClient(t *testing.T) *gophercloud.ServiceClient { return buildtest.ImageClient(t, theLab) }

// findImage returns the one active image of that name and deletes it when
// the test ends.
func findImage(t *testing.T, name string) *images.Image {
	t.Helper()
	img := buildtest.FindImage(t, theLab, name)
	return &img
}

func requireNoImage(t *testing.T, name string) { t.Helper(); buildtest.RequireNoImage(t, theLab, name) }

func imageFiles(t *testing.T, id string) string {
	t.Helper()
	return buildtest.ImageFiles(t, theLab, id)
}

// requireNoSecrets scans every regular file under root (at least 100: a
// fat image's layer) for the lab's secrets.
func requireNoSecrets(t *testing.T, root string) {
	t.Helper()
	buildtest.RequireNoSecretsInTree(t, theLab, root, 100)
}

func TestBuilderBasic(t *testing.T) {
	labtest.Require(t)
	name := fmt.Sprintf("e2e-basic-%d", time.Now().Unix())
	r := build(t, []string{"builder-basic.pkr.hcl"}, "-var", "image_name="+name)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	img := findImage(t, name)
	if img.Status != images.ImageStatusActive || img.Visibility != images.ImageVisibilityPrivate || img.MinDiskGigabytes != 20 {
		t.Fatalf("image %+v", img)
	}
	if !slices.Contains(img.Tags, "fatimage") || !slices.Contains(img.Tags, "e2e") {
		t.Fatalf("tags %v", img.Tags)
	}
	if img.Properties["hw_scsi_model"] != "virtio-scsi" {
		t.Fatalf("properties %v", img.Properties)
	}
	if _, ok := img.Properties["signature_verified"]; ok {
		t.Fatalf("signature_verified inherited: %v", img.Properties)
	}
	if !strings.Contains(r.Output(), img.ID) {
		t.Fatalf("the artifact does not name image %s:\n%s", img.ID, r.Output())
	}
	labtest.RequireClean(t, theLab)

	// The build VM never ran ansible-init (the template's provisioner
	// checks); a server booted from the image without the flag does.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, _ := labtest.BootDial(ctx, t, theLab, "first-boot", img.ID)
	// ssh answers before boot ends; ansible-init is a oneshot unit ordered
	// after cloud-init, so wait for the boot to finish before looking.
	c.Run(t, "systemctl is-system-running --wait >/dev/null; test -e /etc/fatimage-e2e && test -e /var/lib/ansible-init.done")
}

func TestBuilderVolumeBoot(t *testing.T) {
	labtest.Require(t)
	name := fmt.Sprintf("e2e-volume-%d", time.Now().Unix())
	r := build(t, []string{"builder-volume.pkr.hcl"}, "-var", "image_name="+name)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	img := findImage(t, name)
	if img.Status != images.ImageStatusActive || img.DiskFormat != "raw" {
		t.Fatalf("image %+v", img)
	}
	labtest.RequireClean(t, theLab) // the boot volume is gone too
}

func TestBuilderFilterMostRecent(t *testing.T) {
	labtest.Require(t)
	c := imageClient(t)
	var ids []string
	// the last one is newest but its name does not match the pattern
	// created_at has second resolution: the images are seeded a minute
	// apart, oldest first
	for i, name := range []string{"rocky-nightly-old", "rocky-nightly-new", "alma-nightly-newest"} {
		disk, err := theLab.VMs.CloneDisk(theLab.BaseImageDisk)
		if err != nil {
			t.Fatal(err)
		}
		id, err := theLab.Cloud.AddImage(cloud.ImageSeed{Name: name, Disk: disk, Visibility: "public", Tags: []string{"nightly"},
			CreatedAt: time.Now().Add(time.Duration(i-3) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		t.Cleanup(func() { images.Delete(context.Background(), c, id) })
	}
	name := fmt.Sprintf("e2e-filter-%d", time.Now().Unix())
	r := build(t, []string{"builder-filter.pkr.hcl"}, "-var", "image_name="+name)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	findImage(t, name)
	if !strings.Contains(r.Output(), ids[1]) || strings.Contains(r.Output(), ids[0]) || strings.Contains(r.Output(), ids[2]) {
		t.Fatalf("want source image %s (newest matching rocky-nightly-*), not %s or %s:\n%s", ids[1], ids[0], ids[2], r.Output())
	}
	labtest.RequireClean(t, theLab)
}

func TestBuilderInterruptsAndFailures(t *testing.T) {
	labtest.Require(t)
	p := packertest.Setup(t)
	start := func(name string) *packertest.Proc {
		dir := t.TempDir()
		buildtest.Layout(t, dir, "testdata", "builder-slow.pkr.hcl")
		return p.Start(t, dir, theLab.Environ(), "build", "-var", "image_name="+name, ".")
	}
	defer theLab.Cloud.SetFaults()

	for _, tc := range []struct {
		name    string
		faults  []cloud.Fault
		waitFor string // interrupt once packer prints this; "" lets the build fail by itself
		want    string
	}{
		{"ctrl-c-during-boot", []cloud.Fault{{Kind: cloud.FaultServerStuck, Name: "^ctrl-c-during-boot$"}},
			"to become ACTIVE", "interrupted"},
		{"ctrl-c-during-save", []cloud.Fault{{Service: "image", Method: "GET", Path: `^/image/v2/images/[0-9a-f-]+$`, Latency: 2 * time.Second}},
			"to become active", "interrupted"},
		{"server-error", []cloud.Fault{{Kind: cloud.FaultServerError, Name: "^server-error$", Message: "No valid host was found"}},
			"", "No valid host was found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			theLab.Cloud.SetFaults(tc.faults...)
			proc := start(tc.name)
			if tc.waitFor != "" {
				proc.WaitFor(t, tc.waitFor, 2*time.Minute)
				if err := proc.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			r := proc.Wait(t, 3*time.Minute)
			theLab.Cloud.SetFaults()
			if r.ExitCode == 0 || !strings.Contains(strings.ToLower(r.Output()), strings.ToLower(tc.want)) {
				t.Fatalf("exit %d, want %q in:\n%s", r.ExitCode, tc.want, r.Output())
			}
			labtest.RequireClean(t, theLab)
			requireNoImage(t, tc.name)
		})
	}
}

// TestApplianceExample builds example/ (the appliance's template on the
// plugin, with the lab's variables) and then example/extra on top of it,
// as a user runs them.
func TestApplianceExample(t *testing.T) {
	labtest.Require(t)
	p := packertest.Setup(t)
	example, _ := filepath.Abs("../../example")
	name := fmt.Sprintf("e2e-appliance-%d", time.Now().Unix())
	dir := t.TempDir()
	manifest, extraManifest := filepath.Join(dir, "manifest.json"), filepath.Join(dir, "extra.json")
	vars := []string{"-var-file", filepath.Join(example, "lab.pkrvars.hcl"), "-var", "release_base_url=" + theLab.Env["LAB_RELEASES_URL"], "-var", "git_base_url=" + theLab.Env["LAB_GIT_URL"],
		"-var", "python_index_url=" + theLab.Env["LAB_PYPI_URL"], "-var", "github_releases_url=" + theLab.Releases.URL(), "-var", "rstudio_download_url=" + theLab.Releases.URL(), "-var", "container_registry=" + theLab.Env["LAB_REGISTRY"], "-var", "image_name=" + name, "-var", "git_commit=0123456789abcdef",
		"-var", "grafana_dashboards_url=" + theLab.Env["LAB_GRAFANA_URL"], "-var", "netlib_url=" + theLab.Env["LAB_NETLIB_URL"]}
	env := theLab.Environ()
	for _, args := range [][]string{
		append([]string{"validate"}, append(vars, example)...),
		append([]string{"validate"}, append(vars, filepath.Join(example, "extra"))...),
	} {
		if r := p.Run(t, dir, env, args...); r.ExitCode != 0 {
			t.Fatalf("packer %v:\n%s", args, r.Output())
		}
	}
	imageManifest := filepath.Join(dir, "image-manifest.json")
	// The fat build takes its groups from the checked-in appliance
	// inventory layout (common → site → environment) with
	// inventory_groups = "fatimage", as an appliance site would, plus
	// compute_init as CI builds have it (given after the var file, so it wins);
	// gateway and compute_init take their files from the checked-in
	// stand-in of an appliance checkout.
	envs, _ := filepath.Abs("../appliance/environments")
	applianceDir, _ := filepath.Abs("../appliance")
	inv := fmt.Sprintf(`inventory=["%s/common/inventory","%s/site/inventory","%s/fatsite/inventory"]`, envs, envs, envs)
	fatVars := append(slices.Clone(vars), "-var", "appliance_dir="+applianceDir, "-var", "inventory_groups=fatimage,compute_init", example)
	// the whole appliance is more than Run's five minutes on a loaded
	// machine; a build over its bound still fails, with its output
	r := p.Start(t, dir, env, append([]string{"build", "-var", "manifest_output_path=" + manifest, "-var", "image_manifest_path=" + imageManifest, "-var", inv},
		fatVars...)...).Wait(t, 20*time.Minute)
	if r.ExitCode != 0 {
		t.Fatalf("packer build example:\n%s", r.Output())
	}
	fat := readArtifact(t, manifest)
	if !regexp.MustCompile(`^` + name + `-\d{6}-\d{4}-01234567$`).MatchString(fat.CustomData["image_name"]) {
		t.Errorf("image name %q: want <image_name>-YYMMDD-hhmm-<commit>", fat.CustomData["image_name"])
	}
	// image.json names the data source's snapshot set
	var im struct {
		Image struct {
			SnapshotID      string   `json:"snapshot_id"`
			InventoryGroups []string `json:"inventory_groups"`
			Content         struct {
				Git        map[string]struct{ Commit string }     `json:"git"`
				Containers []struct{ Image, User, Digest string } `json:"containers"`
			} `json:"content"`
		} `json:"image"`
		Packages []string `json:"packages"`
	}
	if data, err := os.ReadFile(imageManifest); err != nil || json.Unmarshal(data, &im) != nil || im.Image.SnapshotID != fat.CustomData["snapshot_id"] || im.Image.SnapshotID == "" {
		t.Errorf("image manifest snapshot_id %q, data source %q (%v)", im.Image.SnapshotID, fat.CustomData["snapshot_id"], err)
	}
	// the host's groups as Ansible resolves them, the environment's own included
	for _, g := range []string{"builder", "fatimage", "compute_init", "grafana", "openondemand_desktop", "site_monitoring"} {
		if !slices.Contains(im.Image.InventoryGroups, g) {
			t.Errorf("image.json inventory_groups lacks %s: %v", g, im.Image.InventoryGroups)
		}
	}
	// the Open OnDemand apps, cloned from the lab's git server at their pins
	if rs := im.Image.Content.Git["/var/www/ood/apps/sys/rstudio"]; rs.Commit != theLab.Git.Commit("stackhpc/ood-stackhpc-rstudio", "2025.08.1") || len(im.Image.Content.Git) != 3 {
		t.Errorf("image manifest git checkouts %+v", im.Image.Content.Git)
	}
	// mysql, opensearch and filebeat from the lab's registry, as podman's
	for _, ct := range im.Image.Content.Containers {
		ref := strings.TrimPrefix(ct.Image, theLab.Env["LAB_REGISTRY"]+"/")
		if ct.User != "podman" || ct.Digest == "" || ct.Digest != theLab.Registry.Digest(ref) {
			t.Errorf("image manifest container %+v, the registry has %s", ct, theLab.Registry.Digest(ref))
		}
	}
	if len(im.Image.Content.Containers) != 3 {
		t.Errorf("image manifest containers %+v", im.Image.Content.Containers)
	}
	// the whole fatimage group: module streams chose nodejs 22 and ruby
	// 3.3 over the plain 16 and 3.0, @Xfce brought its packages, the
	// pins held against newer packages in the snapshot
	for _, want := range []string{"nodejs-22.19.0-", "ruby-3.3.8-", "ondemand-4.1.4-", "xfce4-session-", "turbovnc-3.0.1-", "slurm-slurmd-ohpc-"} {
		if !slices.ContainsFunc(im.Packages, func(p string) bool { return strings.HasPrefix(p, want) }) {
			t.Errorf("the fat image lacks %s*", want)
		}
	}
	img := findImage(t, fat.CustomData["image_name"])
	if img.ID != fat.ArtifactID || img.Properties["fatimage_kind"] != "fat" || img.Properties["fatimage_os"] != "RL9" {
		t.Fatalf("image %+v, manifest %+v", img, fat)
	}
	labtest.RequireClean(t, theLab)
	checkApplianceContract(t, fat.CustomData["image_name"], img.ID)
	labtest.RequireClean(t, theLab)

	r = p.Run(t, dir, env, append([]string{"build", "-var", "manifest_output_path=" + extraManifest, "-var", "extra_groups=nfs"},
		append(vars, filepath.Join(example, "extra"))...)...)
	if r.ExitCode != 0 {
		t.Fatalf("packer build example/extra:\n%s", r.Output())
	}
	extra := readArtifact(t, extraManifest)
	findImage(t, extra.CustomData["image_name"])
	if !strings.Contains(r.Output(), img.ID) || !strings.Contains(r.Output(), "nfs-utils") {
		t.Errorf("the extra build did not start from the fat image %s or did not install nfs-utils:\n%s", img.ID, r.Output())
	}
	labtest.RequireClean(t, theLab)
	checkExtraBuild(t, p, dir, env, vars, inv, img.ID)
	labtest.RequireClean(t, theLab)
	checkApplianceExtraBuild(t, "9", "doca,cuda,lustre", fat.CustomData["image_name"], img.ID, "5.14.0-570.58.1.el9_6", slurmPackages(im.Packages))
}

type artifact struct {
	ArtifactID string            `json:"artifact_id"`
	CustomData map[string]string `json:"custom_data"`
}

// readArtifact returns the last build of a manifest post-processor file.
func readArtifact(t *testing.T, file string) artifact {
	t.Helper()
	var m struct{ Builds []artifact }
	data, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil || len(m.Builds) == 0 {
		t.Fatalf("manifest %s: %v %s", file, err, data)
	}
	return m.Builds[len(m.Builds)-1]
}

// labBinaryVars points the templates at the lab's release server and
// its stand-in tarballs' checksums.
func labBinaryVars() []string {
	var kv []string
	for name, sum := range theLab.BinaryChecksums() {
		kv = append(kv, fmt.Sprintf("%s = %q", name, sum))
	}
	slices.Sort(kv)
	return []string{"-var", "binary_sha256={" + strings.Join(kv, ", ") + "}"}
}

// standInSums are the sha256s of the executables in the lab's tarballs.
func standInSums(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, b := range theLab.Releases.Binaries() {
		tgz, err := releases.Tarball(b)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(tgz))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			if slices.Contains(b.Files, path.Base(h.Name)) {
				data, _ := io.ReadAll(tr)
				sum := sha256.Sum256(data)
				out[path.Base(h.Name)] = hex.EncodeToString(sum[:])
			}
		}
	}
	return out
}

type fatManifest struct {
	Image struct {
		OS, Kernel    string
		OSName        string            `json:"os_name"`
		PackageCount  int               `json:"package_count"`
		PackageDigest string            `json:"package_digest"`
		Snapshots     map[string]string `json:"snapshots"`
		Binaries      map[string]struct {
			Version, SHA256 string
		} `json:"binaries"`
	} `json:"image"`
	Packages []string `json:"packages"`
	DNFRuns  int      `json:"dnf_runs"`
	Reboots  int      `json:"reboots"`
	Reboot   struct {
		Rebooted bool     `json:"rebooted"`
		Pending  []string `json:"pending_at_snapshot"`
	} `json:"reboot"`
}

func readFatManifest(t *testing.T, file string) fatManifest {
	t.Helper()
	var m fatManifest
	data, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		t.Fatalf("manifest_output: %v", err)
	}
	return m
}

// rpmName is the name of a name-version-release.arch from rpm -qa.
func rpmName(nvra string) string {
	parts := strings.Split(nvra, "-")
	if len(parts) < 3 {
		return nvra
	}
	return strings.Join(parts[:len(parts)-2], "-")
}

// TestFatBuild is the provisioner's end-to-end case 1, a fat build from
// the GenericCloud image, and case 2, an extra build on top of it.
func TestFatBuild(t *testing.T) {
	labtest.Require(t)
	name := fmt.Sprintf("e2e-fat-%d", time.Now().Unix())
	m1 := filepath.Join(t.TempDir(), "fat.json")
	sbom1 := filepath.Join(t.TempDir(), "fat.cdx.json")
	r := build(t, []string{"fat-common.pkr.hcl", "fat-basic.pkr.hcl", "playbooks"},
		append(labBinaryVars(), "-var", "image_name="+name, "-var", "manifest_output="+m1, "-var", "sbom_output="+sbom1)...)
	if strings.Contains(r.Output(), theLab.ArkPassword) {
		t.Fatal("the Ark password appeared in packer's output")
	}
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)

	// no step needs the running kernel: no reboot (the kernel update and
	// SELinux wait for the image's first boot, recorded as pending), and
	// at most two dnf commands
	done := regexp.MustCompile(`fatimage: done: (\d+) dnf command\(s\), (\d+) reboot\(s\)`).FindAllStringSubmatch(r.Output(), -1)
	man := readFatManifest(t, m1)
	if len(done) != 1 || done[0][2] != "0" || man.Reboots != 0 || man.Reboot.Rebooted || len(man.Reboot.Pending) == 0 {
		t.Errorf("want no reboot and a pending one recorded: %v, manifest %d %+v", done, man.Reboots, man.Reboot)
	}
	if man.DNFRuns < 1 || man.DNFRuns > 2 {
		t.Errorf("%d dnf commands, want 1 or 2", man.DNFRuns)
	}
	if man.Image.Snapshots["baseos"] != repos.NewerTimestamp || man.Image.PackageCount != len(man.Packages) || man.Image.Kernel == "" {
		t.Errorf("manifest image %+v", man.Image)
	}

	// what the image itself carries
	files := imageFiles(t, img.ID)
	requireNoSecrets(t, files)
	if _, err := os.Stat(filepath.Join(files, "var/lib/ansible-init.done")); err == nil {
		t.Error("the image carries the ansible-init sentinel")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, stop := labtest.BootDial(ctx, t, theLab, "fat-first-boot", img.ID)
	// packages at the newer snapshot's versions
	if got := c.Run(t, "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' slurm-ohpc grafana tzdata epel-release munge && ! rpm -q cockpit-ws >/dev/null"); got != "slurm-ohpc-23.11.10-321.ohpc.3.2\ngrafana-10.4.18-1\ntzdata-2025b-1.el9\nepel-release-9-10.el9\nmunge-0.5.13-13.el9" {
		t.Errorf("packages:\n%s", got)
	}
	checkFatSBOM(t, c, sbom1, man)
	// binaries with the right checksums
	want := standInSums(t)
	for _, f := range []string{"node_exporter", "prometheus", "promtool", "alertmanager", "amtool"} {
		if got := c.Run(t, "sha256sum /usr/local/bin/"+f+" | cut -d' ' -f1"); got != want[f] || got == "" {
			t.Errorf("%s: sha256 %s, want %s", f, got, want[f])
		}
	}
	// fixed-ID users (prometheus' and grafana's primary group useradd -N's,
	// their groups made apart), the login user's home moved
	if got := c.Run(t, "for u in slurm prometheus grafana; do getent passwd $u | cut -d: -f1,3,4,6; done; getent group prometheus grafana | cut -d: -f1,3; getent passwd rocky | cut -d: -f6"); got != "slurm:202:202:/etc/slurm\nprometheus:981:100:/var/lib/prometheus\ngrafana:984:100:/usr/share/grafana\nprometheus:976\ngrafana:979\n/var/lib/rocky" {
		t.Errorf("users:\n%s", got)
	}
	// services installed but not enabled; files placed
	if got := c.Run(t, "for u in firewalld grafana-server slurmctld; do systemctl is-enabled $u || true; done; test -x /etc/ansible-init/playbooks/roles/compute_init/run.sh && echo playbooks"); got != "disabled\ndisabled\ndisabled\nplaybooks" {
		t.Errorf("services and files:\n%s", got)
	}
	// repos disabled, no credentials; image.json filled
	for what, re := range map[string]string{"repositories enabled": "^[[:space:]]*enabled[[:space:]]*=[[:space:]]*1", "credentials": "^(username|password)"} {
		if got := c.Run(t, labtest.GrepAsRoot("-rlE "+labtest.ShQuote(re)+" /etc/yum.repos.d")); got != "" {
			t.Errorf("%s left in %s", what, got)
		}
	}
	var info fatManifest
	if err := json.Unmarshal([]byte(c.Run(t, `printf '{"image": %s}' "$(cat /var/lib/image/image.json)"`)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Image.OS != "Rocky 9.6" || info.Image.OSName != "Rocky Linux 9.6 (Blue Onyx)" || info.Image.PackageDigest != man.Image.PackageDigest || info.Image.Snapshots["OpenHPC-updates"] != repos.NewerTimestamp ||
		info.Image.Binaries["prometheus"].Version != "3.5.3" || info.Image.Binaries["prometheus"].SHA256 == "" {
		t.Errorf("image.json %+v", info.Image)
	}
	// the appliance's keys, with its value rules: build is the VM's
	// nodename (the instance name), versions of absent packages are "-"
	var keys map[string]any
	if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &keys); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"build": name, "os": "Rocky 9.6", "slurm-ohpc": "23.11.10", "ofed": "-", "doca": "-", "cuda": "-", "kernel": info.Image.Kernel} {
		if keys[k] != v {
			t.Errorf("image.json %s = %v, want %q", k, keys[k], v)
		}
	}
	for _, k := range []string{"branch", "commit"} {
		if v, _ := keys[k].(string); v == "" {
			t.Errorf("image.json %s missing: %v", k, keys)
		}
	}
	stop() // before the extra build's leak check

	t.Run("extra build", func(t *testing.T) {
		extra := name + "-extra"
		m2 := filepath.Join(t.TempDir(), "extra.json")
		r := build(t, []string{"fat-common.pkr.hcl", "fat-extra.pkr.hcl"},
			"-var", "image_name="+extra, "-var", "source_image_name="+name, "-var", "manifest_output="+m2)
		if r.ExitCode != 0 {
			t.Fatalf("packer build failed:\n%s", r.Output())
		}
		findImage(t, extra)
		labtest.RequireClean(t, theLab)
		man2 := readFatManifest(t, m2)
		before := map[string]bool{}
		for _, p := range man.Packages {
			before[p] = true
		}
		var added []string
		for _, p := range man2.Packages {
			if !before[p] {
				added = append(added, rpmName(p))
			}
			delete(before, p)
		}
		slices.Sort(added)
		if strings.Join(added, ",") != "oddjob,oddjob-mkhomedir,sssd-client,sssd-common" || len(before) != 0 || man2.Reboots != 0 {
			t.Errorf("the extra build added %v, removed or changed %v, rebooted %d times", added, before, man2.Reboots)
		}
		if strings.Contains(r.Output(), "fatimage: packages: update, ") || strings.Contains(r.Output(), "created user") {
			t.Errorf("the extra build updated or created users:\n%s", r.Output())
		}
	})
}

// TestFatHostBinaries is case 3: the VM cannot reach the release
// server; with binary_source = "host" the plugin fetches the tarballs.
func TestFatHostBinaries(t *testing.T) {
	labtest.Require(t)
	if err := theLab.SetReleasesReachableFromVMs(false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := theLab.SetReleasesReachableFromVMs(true); err != nil {
			t.Error(err)
		}
	})
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())

	// the control: with the default binary_source = "vm" the build fails
	// at the download, before any package work, and leaves nothing
	name := fmt.Sprintf("e2e-vmsrc-%d", time.Now().Unix())
	r := build(t, []string{"fat-common.pkr.hcl", "fat-host.pkr.hcl"}, append(labBinaryVars(), "-var", "image_name="+name, "-var", "binary_source=vm")...)
	// the cause first: which binary, from where
	if r.ExitCode == 0 || !strings.Contains(r.Output(), "binaries: node_exporter 1.11.1: downloading "+theLab.Env["LAB_RELEASES_URL"]+"/node_exporter/releases/download/v1.11.1/node_exporter-1.11.1.linux-amd64.tar.gz failed\nfatimage binaries-fetch: ") {
		t.Fatalf("want the VM's download to fail:\n%s", r.Output())
	}
	requireNoImage(t, name)
	labtest.RequireClean(t, theLab)

	name = fmt.Sprintf("e2e-hostsrc-%d", time.Now().Unix())
	r = build(t, []string{"fat-common.pkr.hcl", "fat-host.pkr.hcl"}, append(labBinaryVars(), "-var", "image_name="+name)...)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	if !strings.Contains(r.Output(), "fatimage: downloading "+theLab.Env["LAB_RELEASES_URL"]+"/prometheus/releases/download/v3.5.3/") {
		t.Errorf("no host download in the output:\n%s", r.Output())
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)
	want := standInSums(t)
	for _, f := range []string{"node_exporter", "prometheus", "promtool"} {
		data, err := os.ReadFile(filepath.Join(imageFiles(t, img.ID), "usr/local/bin", f))
		sum := sha256.Sum256(data)
		if err != nil || hex.EncodeToString(sum[:]) != want[f] {
			t.Errorf("%s in the image: %v", f, err)
		}
	}
}

// TestFatProvisionerTwice runs the provisioner twice in one build: the
// second run installs nothing, reboots nothing and leaves the package set
// as it was.
func TestFatProvisionerTwice(t *testing.T) {
	labtest.Require(t)
	name := fmt.Sprintf("e2e-twice-%d", time.Now().Unix())
	r := build(t, []string{"fat-common.pkr.hcl", "fat-twice.pkr.hcl"}, "-var", "image_name="+name)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	findImage(t, name)
	out := r.Output()
	done := regexp.MustCompile(`fatimage: done: (\d+) dnf command\(s\), (\d+) reboot\(s\)`).FindAllStringSubmatch(out, -1)
	if len(done) != 2 || done[0][2] != "0" || done[1][2] != "0" {
		t.Fatalf("want no reboot in either run, got %v:\n%s", done, out)
	}
	second := out[strings.LastIndex(out, "fatimage: repositories"):]
	if !strings.Contains(second, "Nothing to do.") || strings.Contains(second, "Installed:") || strings.Contains(second, "created user") {
		t.Fatalf("the second run changed something:\n%s", second)
	}
	labtest.RequireClean(t, theLab)
}
