// Package buildtest holds what the test suites that run packer builds on
// the lab (testworld/e2e, testworld/faults) share: the common fat-build
// template, finding and checking the images a build made, and the audit of
// files and output for the lab's secrets.
package buildtest

import (
	"context"
	_ "embed"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/secretaudit"
)

// FatCommon is the fat builds' shared template: the fatimage-ark data
// source, the builder on the lab and the provisioner's settings that every
// fat build uses; a test adds its own scenario file next to it.
//
//go:embed fat-common.pkr.hcl
var FatCommon []byte

// FatCommonName is the name tests lay FatCommon out under.
const FatCommonName = "fat-common.pkr.hcl"

// SitePulp is the site Pulp build (testworld/e2e and testworld/faults run
// it): the VM cannot reach Ark, the data source syncs into the site Pulp.
//
//go:embed site-pulp.pkr.hcl
var SitePulp []byte

// SitePulpName is the name tests lay SitePulp out under.
const SitePulpName = "site-pulp.pkr.hcl"

// shared are the embedded templates Layout lays out by name.
var shared = map[string][]byte{FatCommonName: FatCommon, SitePulpName: SitePulp}

// ImageClient is an image (Glance) client authenticated as the lab's user.
func ImageClient(t testing.TB, l *lab.Lab) *gophercloud.ServiceClient {
	t.Helper()
	provider, err := labtest.Provider(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	c, err := openstack.NewImageV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ListImages lists the images named name.
func ListImages(t testing.TB, l *lab.Lab, name string) []images.Image {
	t.Helper()
	pages, err := images.List(ImageClient(t, l), images.ListOpts{Name: name}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	list, err := images.ExtractImages(pages)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// FindImage returns the one active image named name and deletes it when
// the test ends.
func FindImage(t testing.TB, l *lab.Lab, name string) images.Image {
	t.Helper()
	list := ListImages(t, l, name)
	if len(list) != 1 || list[0].Status != images.ImageStatusActive {
		t.Fatalf("want one active image named %s, got %+v", name, list)
	}
	t.Cleanup(func() { images.Delete(context.Background(), ImageClient(t, l), list[0].ID) })
	return list[0]
}

// RequireNoImage checks a failed build left no image named name.
func RequireNoImage(t testing.TB, l *lab.Lab, name string) {
	t.Helper()
	if list := ListImages(t, l, name); len(list) != 0 {
		t.Fatalf("image %s left behind: %+v", name, list)
	}
}

// ImageFiles is the directory holding what an image adds to the lab's
// shared lower layer, i.e. everything the build put in it.
func ImageFiles(t testing.TB, l *lab.Lab, id string) string {
	t.Helper()
	disk, ok := l.Cloud.ImageDisk(id)
	if !ok {
		t.Fatalf("image %s has no disk", id)
	}
	return filepath.Join(disk, "upper")
}

// Secrets are the credentials that no log, output, manifest or image may
// carry, in every form they can leak in (secretaudit.Forms), by name: the
// lab's, and those the running tests configured (TrackSecret).
func Secrets(l *lab.Lab) map[string][]byte {
	creds := []secretaudit.Credential{
		{Name: "Ark password", User: lab.ArkUser, Secret: l.ArkPassword},
		{Name: "OpenStack password", Secret: l.CloudPassword},
		{Name: "OpenStack admin password", Secret: l.AdminPassword},
		{Name: "application credential secret", Secret: l.AppCredentialSecret},
		// the Basic forms include what a containers auth file holds
		{Name: "registry password", User: lab.RegistryUser, Secret: l.RegistryPassword},
		{Name: "site Pulp password", User: lab.SitePulpUser, Secret: l.SitePulpPassword},
	}
	tracked.Lock()
	creds = append(creds, tracked.creds...)
	tracked.Unlock()
	return secretaudit.Forms(creds...)
}

// tracked are the credentials tests configured beyond the lab's.
var tracked struct {
	sync.Mutex
	creds []secretaudit.Credential
}

// TrackSecret adds a credential the test configures (a wrong password, a
// registry of its own) to Secrets until the test ends.
func TrackSecret(t testing.TB, c secretaudit.Credential) {
	tracked.Lock()
	tracked.creds = append(tracked.creds, c)
	tracked.Unlock()
	t.Cleanup(func() {
		tracked.Lock()
		defer tracked.Unlock()
		if i := slices.Index(tracked.creds, c); i >= 0 {
			tracked.creds = slices.Delete(tracked.creds, i, i+1)
		}
	})
}

// RequireNoSecrets checks data (named what) carries no secret in any form.
func RequireNoSecrets(t testing.TB, l *lab.Lab, what string, data []byte) {
	t.Helper()
	for _, name := range secretaudit.Find(data, Secrets(l)) {
		t.Errorf("%s carries the %s", what, name)
	}
}

// RequireNoSecretsInTree scans every regular file under root for the lab's
// secrets and returns how many files it read. Reading fewer than minFiles
// fails the test: the scan then missed the tree it was meant to audit.
func RequireNoSecretsInTree(t testing.TB, l *lab.Lab, root string, minFiles int) int {
	t.Helper()
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
		RequireNoSecrets(t, l, "image file "+strings.TrimPrefix(p, root), data)
		return nil
	})
	if err != nil {
		t.Fatalf("scanning %s: %v", root, err)
	}
	if n < minFiles {
		t.Fatalf("scanned only %d files under %s, want at least %d: the scan missed the image's tree", n, root, minFiles)
	}
	return n
}
