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
	"io/fs"
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
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

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

// build runs packer build on templates from testdata, laid out together
// in one directory, with the lab's environment.
func build(t *testing.T, templates []string, args ...string) packertest.Result {
	t.Helper()
	p := packertest.Setup(t)
	dir := t.TempDir()
	for _, name := range templates {
		src := filepath.Join("testdata", name)
		if st, err := os.Stat(src); err == nil && st.IsDir() {
			if err := os.CopyFS(filepath.Join(dir, name), os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p.Run(t, dir, theLab.Environ(), append(append([]string{"build"}, args...), ".")...)
}

func imageClient(t *testing.T) *gophercloud.ServiceClient {
	t.Helper()
	provider, err := labtest.Provider(context.Background(), theLab)
	if err != nil {
		t.Fatal(err)
	}
	c, err := openstack.NewImageV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// findImage returns the image of that name and deletes it when the test ends.
func findImage(t *testing.T, name string) *images.Image {
	t.Helper()
	c := imageClient(t)
	pages, err := images.List(c, images.ListOpts{Name: name}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	list, _ := images.ExtractImages(pages)
	if len(list) != 1 {
		t.Fatalf("want one image named %s, got %d", name, len(list))
	}
	t.Cleanup(func() { images.Delete(context.Background(), c, list[0].ID) })
	return &list[0]
}

func TestBuilderBasic(t *testing.T) {
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
	c.Run(t, "test -e /etc/fatimage-e2e && test -e /var/lib/ansible-init.done")
}

func TestBuilderVolumeBoot(t *testing.T) {
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
	c := imageClient(t)
	var ids []string
	// the last one is newest but its name does not match the pattern
	for _, name := range []string{"rocky-nightly-old", "rocky-nightly-new", "alma-nightly-newest"} {
		disk, err := theLab.VMs.CloneDisk(theLab.BaseImageDisk)
		if err != nil {
			t.Fatal(err)
		}
		id, err := theLab.Cloud.AddImage(cloud.ImageSeed{Name: name, Disk: disk, Visibility: "public", Tags: []string{"nightly"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		t.Cleanup(func() { images.Delete(context.Background(), c, id) })
		time.Sleep(1100 * time.Millisecond) // created_at has second resolution
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

// requireNoImage checks a failed build left no image of that name.
func requireNoImage(t *testing.T, name string) {
	t.Helper()
	pages, err := images.List(imageClient(t), images.ListOpts{Name: name}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := images.ExtractImages(pages); len(list) != 0 {
		t.Fatalf("image %s left behind: %+v", name, list)
	}
}

func TestBuilderInterruptsAndFailures(t *testing.T) {
	p := packertest.Setup(t)
	start := func(name string) *packertest.Proc {
		dir := t.TempDir()
		data, _ := os.ReadFile(filepath.Join("testdata", "builder-slow.pkr.hcl"))
		os.WriteFile(filepath.Join(dir, "build.pkr.hcl"), data, 0o600)
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
	p := packertest.Setup(t)
	example, _ := filepath.Abs("../../example")
	name := fmt.Sprintf("e2e-appliance-%d", time.Now().Unix())
	dir := t.TempDir()
	manifest, extraManifest := filepath.Join(dir, "manifest.json"), filepath.Join(dir, "extra.json")
	vars := []string{"-var-file", filepath.Join(example, "lab.pkrvars.hcl"), "-var", "release_base_url=" + theLab.Env["LAB_RELEASES_URL"], "-var", "git_base_url=" + theLab.Env["LAB_GIT_URL"],
		"-var", "image_name=" + name, "-var", "git_commit=0123456789abcdef"}
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
	r := p.Run(t, dir, env, append([]string{"build", "-var", "manifest_output_path=" + manifest, "-var", "image_manifest_path=" + imageManifest},
		append(vars, example)...)...)
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
			SnapshotID string `json:"snapshot_id"`
			Content    struct {
				Git map[string]struct{ Commit string } `json:"git"`
			} `json:"content"`
		} `json:"image"`
		Packages []string `json:"packages"`
	}
	if data, err := os.ReadFile(imageManifest); err != nil || json.Unmarshal(data, &im) != nil || im.Image.SnapshotID != fat.CustomData["snapshot_id"] || im.Image.SnapshotID == "" {
		t.Errorf("image manifest snapshot_id %q, data source %q (%v)", im.Image.SnapshotID, fat.CustomData["snapshot_id"], err)
	}
	// the Open OnDemand apps, cloned from the lab's git server at their pins
	if rs := im.Image.Content.Git["/var/www/ood/apps/sys/rstudio"]; rs.Commit != theLab.Git.Commit("stackhpc/ood-stackhpc-rstudio", "2025.08.1") || len(im.Image.Content.Git) != 3 {
		t.Errorf("image manifest git checkouts %+v", im.Image.Content.Git)
	}
	// the whole fatimage group: module streams chose nodejs 22 and ruby
	// 3.3 over the plain 16 and 3.0, @Xfce brought its packages
	for _, want := range []string{"nodejs-22.19.0-", "ruby-3.3.8-", "ondemand-4.1.3-", "xfce4-session-", "turbovnc-", "slurm-slurmd-ohpc-"} {
		if !slices.ContainsFunc(im.Packages, func(p string) bool { return strings.HasPrefix(p, want) }) {
			t.Errorf("the fat image lacks %s*", want)
		}
	}
	img := findImage(t, fat.CustomData["image_name"])
	if img.ID != fat.ArtifactID || img.Properties["fatimage_kind"] != "fat" || img.Properties["fatimage_os"] != "RL9" {
		t.Fatalf("image %+v, manifest %+v", img, fat)
	}
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

// imageFiles returns the directory holding what an image adds to the
// lab's shared lower layer, i.e. everything the build put in it.
func imageFiles(t *testing.T, id string) string {
	t.Helper()
	disk, ok := theLab.Cloud.ImageDisk(id)
	if !ok {
		t.Fatalf("image %s has no disk", id)
	}
	return filepath.Join(disk, "upper")
}

// requireNoSecrets scans every regular file under root for the lab's
// secrets.
func requireNoSecrets(t *testing.T, root string) {
	t.Helper()
	secrets := map[string][]byte{"Ark password": []byte(theLab.ArkPassword), "OpenStack password": []byte(theLab.CloudPassword),
		"application credential secret": []byte(theLab.AppCredentialSecret)}
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		for what, s := range secrets {
			if len(s) > 0 && bytes.Contains(data, s) {
				t.Errorf("the image's %s carries the %s", strings.TrimPrefix(p, root), what)
			}
		}
		return nil
	})
	if err != nil || n < 100 {
		t.Fatalf("scanned %d files: %v", n, err)
	}
}

type fatManifest struct {
	Image struct {
		OS, Kernel    string
		PackageCount  int               `json:"package_count"`
		PackageDigest string            `json:"package_digest"`
		Snapshots     map[string]string `json:"snapshots"`
		Binaries      map[string]struct {
			Version, SHA256 string
		} `json:"binaries"`
	} `json:"image"`
	Packages []string `json:"packages"`
	Reboots  int      `json:"reboots"`
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
	name := fmt.Sprintf("e2e-fat-%d", time.Now().Unix())
	m1 := filepath.Join(t.TempDir(), "fat.json")
	r := build(t, []string{"fat-common.pkr.hcl", "fat-basic.pkr.hcl", "playbooks"},
		append(labBinaryVars(), "-var", "image_name="+name, "-var", "manifest_output="+m1)...)
	if strings.Contains(r.Output(), theLab.ArkPassword) {
		t.Fatal("the Ark password appeared in packer's output")
	}
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)

	// exactly one reboot (kernel update and SELinux), reported and recorded
	done := regexp.MustCompile(`fatimage: done: (\d+) dnf command\(s\), (\d+) reboot\(s\)`).FindAllStringSubmatch(r.Output(), -1)
	man := readFatManifest(t, m1)
	if len(done) != 1 || done[0][2] != "1" || man.Reboots != 1 {
		t.Errorf("want exactly one reboot: %v, manifest %d", done, man.Reboots)
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
	if got := c.Run(t, "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' slurm-ohpc grafana tzdata epel-release munge && ! rpm -q cockpit-ws >/dev/null"); got != "slurm-ohpc-23.11.10-321.ohpc.3.2\ngrafana-10.4.19-1\ntzdata-2025b-1.el9\nepel-release-9-10.el9\nmunge-0.5.13-13.el9" {
		t.Errorf("packages:\n%s", got)
	}
	// binaries with the right checksums
	want := standInSums(t)
	for _, f := range []string{"node_exporter", "prometheus", "promtool", "alertmanager", "amtool"} {
		if got := c.Run(t, "sha256sum /usr/local/bin/"+f+" | cut -d' ' -f1"); got != want[f] || got == "" {
			t.Errorf("%s: sha256 %s, want %s", f, got, want[f])
		}
	}
	// fixed-ID users, the login user's home moved
	if got := c.Run(t, "for u in slurm prometheus grafana; do getent passwd $u | cut -d: -f1,3,4,6; done; getent group prometheus grafana | cut -d: -f1,3; getent passwd rocky | cut -d: -f6"); got != "slurm:202:202:/etc/slurm\nprometheus:981:976:/var/lib/prometheus\ngrafana:984:979:/usr/share/grafana\nprometheus:976\ngrafana:979\n/var/lib/rocky" {
		t.Errorf("users:\n%s", got)
	}
	// services installed but not enabled; files placed
	if got := c.Run(t, "for u in firewalld grafana-server slurmctld; do systemctl is-enabled $u || true; done; test -x /etc/ansible-init/playbooks/roles/compute_init/run.sh && echo playbooks"); got != "disabled\ndisabled\ndisabled\nplaybooks" {
		t.Errorf("services and files:\n%s", got)
	}
	// repos disabled, no credentials; image.json filled
	c.Run(t, "! grep -rqE '^[[:space:]]*enabled[[:space:]]*=[[:space:]]*1' /etc/yum.repos.d && ! sudo grep -rqE '^(username|password)' /etc/yum.repos.d")
	var info fatManifest
	if err := json.Unmarshal([]byte(c.Run(t, `printf '{"image": %s}' "$(cat /var/lib/image/image.json)"`)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Image.OS != "Rocky Linux 9.6 (Blue Onyx)" || info.Image.PackageDigest != man.Image.PackageDigest || info.Image.Snapshots["OpenHPC-updates"] != repos.NewerTimestamp ||
		info.Image.Binaries["prometheus"].Version != "3.5.3" || info.Image.Binaries["prometheus"].SHA256 == "" {
		t.Errorf("image.json %+v", info.Image)
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
		if strings.Contains(r.Output(), "dnf update") || strings.Contains(r.Output(), "created user") {
			t.Errorf("the extra build updated or created users:\n%s", r.Output())
		}
	})
}

// TestFatHostBinaries is case 3: the VM cannot reach the release
// server; with binary_source = "host" the plugin fetches the tarballs.
func TestFatHostBinaries(t *testing.T) {
	if err := theLab.SetReleasesReachableFromVMs(false); err != nil {
		t.Fatal(err)
	}
	defer theLab.SetReleasesReachableFromVMs(true)
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())

	// the control: with the default binary_source = "vm" the build fails
	// at the download, before any package work, and leaves nothing
	name := fmt.Sprintf("e2e-vmsrc-%d", time.Now().Unix())
	r := build(t, []string{"fat-common.pkr.hcl", "fat-host.pkr.hcl"}, append(labBinaryVars(), "-var", "image_name="+name, "-var", "binary_source=vm")...)
	if r.ExitCode == 0 || !strings.Contains(r.Output(), "fatimage binaries-fetch: curl -fsSL") {
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
	name := fmt.Sprintf("e2e-twice-%d", time.Now().Unix())
	r := build(t, []string{"fat-common.pkr.hcl", "fat-twice.pkr.hcl"}, "-var", "image_name="+name)
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	findImage(t, name)
	out := r.Output()
	done := regexp.MustCompile(`fatimage: done: (\d+) dnf command\(s\), (\d+) reboot\(s\)`).FindAllStringSubmatch(out, -1)
	if len(done) != 2 || done[0][2] != "1" || done[1][2] != "0" {
		t.Fatalf("want one reboot in the first run and none in the second, got %v:\n%s", done, out)
	}
	second := out[strings.LastIndex(out, "fatimage: repositories"):]
	if !strings.Contains(second, "Nothing to do.") || strings.Contains(second, "Installed:") || strings.Contains(second, "created user") {
		t.Fatalf("the second run changed something:\n%s", second)
	}
	labtest.RequireClean(t, theLab)
}
