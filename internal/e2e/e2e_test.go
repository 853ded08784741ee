// Package e2e runs real `packer build`s with the plugin installed against
// the local lab: the builder, provisioner and data source together, as
// users run them.
package e2e

import (
	"context"
	"fmt"
	"os"
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
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	"github.com/stackhpc/packer-plugin-fatimage/internal/lab"
	"github.com/stackhpc/packer-plugin-fatimage/internal/lab/cloud"
	"github.com/stackhpc/packer-plugin-fatimage/internal/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packertest"
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
		data, err := os.ReadFile(filepath.Join("testdata", name))
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
	srv, cleanup, err := labtest.Boot(ctx, t, theLab, "first-boot", img.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	c, err := srv.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
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
	for _, name := range []string{"rocky-nightly-old", "rocky-nightly-new"} {
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
	if !strings.Contains(r.Output(), ids[1]) || strings.Contains(r.Output(), ids[0]) {
		t.Fatalf("want source image %s (newest), not %s:\n%s", ids[1], ids[0], r.Output())
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

// TestApplianceExample builds example/openstack, the appliance's source
// block with only its type renamed, on the lab.
func TestApplianceExample(t *testing.T) {
	p := packertest.Setup(t)
	ctx := context.Background()
	provider, err := labtest.Provider(ctx, theLab)
	if err != nil {
		t.Fatal(err)
	}
	netClient, _ := openstack.NewNetworkV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	pages, err := networks.List(netClient, networks.ListOpts{Name: "lab-net"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nets, _ := networks.ExtractNetworks(pages)
	if len(nets) != 1 {
		t.Fatalf("lab-net: %v", nets)
	}
	example, _ := filepath.Abs("../../example/openstack")
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	name := fmt.Sprintf("e2e-appliance-%d", time.Now().Unix())
	env := theLab.Environ()
	args := []string{"-var-file", filepath.Join(example, "lab.pkrvars.hcl"), "-var", fmt.Sprintf(`networks=["%s"]`, nets[0].ID),
		"-var", "image_name=" + name, "-var", "image_name_version=", "-var", "manifest_output_path=" + manifest, example}
	if r := p.Run(t, t.TempDir(), env, append([]string{"validate"}, args...)...); r.ExitCode != 0 {
		t.Fatalf("packer validate:\n%s", r.Output())
	}
	r := p.Run(t, t.TempDir(), env, append([]string{"build"}, args...)...)
	if r.ExitCode != 0 {
		t.Fatalf("packer build:\n%s", r.Output())
	}
	img := findImage(t, name)
	data, err := os.ReadFile(manifest)
	if err != nil || !strings.Contains(string(data), `"artifact_id": "`+img.ID+`"`) || img.DiskFormat != "qcow2" {
		t.Fatalf("manifest %s (%v), image %+v", data, err, img)
	}
	labtest.RequireClean(t, theLab)
}

// TestFatBuild runs data source, builder and provisioner together: the
// image boots with the Slurm packages from the newer snapshot, its repos
// disabled and no credential left in any repo file.
func TestFatBuild(t *testing.T) {
	name := fmt.Sprintf("e2e-fat-%d", time.Now().Unix())
	r := build(t, []string{"fat-common.pkr.hcl", "fat-basic.pkr.hcl"}, "-var", "image_name="+name)
	if strings.Contains(r.Output(), theLab.ArkPassword) {
		t.Fatal("the Ark password appeared in packer's output")
	}
	if r.ExitCode != 0 {
		t.Fatalf("packer build failed:\n%s", r.Output())
	}
	img := findImage(t, name)
	labtest.RequireClean(t, theLab)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, cleanup, err := labtest.Boot(ctx, t, theLab, "fat-first-boot", img.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	c, err := srv.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Run(t, "rpm -q ohpc-slurm-server munge && test -s /var/lib/image/image.json")
	c.Run(t, "! grep -rq 'enabled *= *1' /etc/yum.repos.d && ! sudo grep -rqF '"+theLab.ArkPassword+"' /etc")
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
