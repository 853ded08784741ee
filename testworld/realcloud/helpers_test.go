//go:build realcloud

package realcloud

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// tier is the running tier; a test that cannot reach it fails (never
// skips): make test-realcloud is asked for on purpose.
func tier(t *testing.T) *Tier {
	t.Helper()
	root, err := packertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	tr := Open(root)
	if _, err := tr.Env(); err != nil {
		t.Fatalf("the real-cloud tier is not up: %v", err)
	}
	return tr
}

// client is a service client of the tier as the member (or the admin).
func client(t *testing.T, tr *Tier, admin bool, newClient func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)) *gophercloud.ServiceClient {
	t.Helper()
	p, err := tr.Provider(context.Background(), admin)
	if err != nil {
		t.Fatalf("the real-cloud tier is not up: %v", err)
	}
	c, err := newClient(p, EndpointOpts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clean records the cloud's resources now and, when the test ends,
// fails it for anything the test added and did not remove: the real
// services count (servers, volumes, ports, floating IPs, keypairs,
// images, application credentials, security groups).
func clean(t *testing.T, tr *Tier) {
	t.Helper()
	before, err := tr.Snapshot(context.Background())
	if err != nil {
		t.Fatalf("the real-cloud tier is not up: %v", err)
	}
	t.Cleanup(func() {
		// Nova deletes a server, and Neutron its port, after the API has
		// answered: a leftover must persist for a while to count (long
		// enough for a loaded machine's Nova).
		deadline := time.Now().Add(5 * time.Minute)
		for {
			after, err := tr.Snapshot(context.Background())
			if err != nil {
				t.Errorf("counting leftovers: %v", err)
				return
			}
			added := after.Added(before)
			if len(added) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("the build left resources in the cloud:\n%s", added)
				return
			}
			time.Sleep(2 * time.Second)
		}
	})
}

const pluginBlock = `
packer {
  required_plugins {
    fatimage = {
      source  = "github.com/stackhpc/fatimage"
      version = ">= 0.1.0"
    }
  }
}
`

// build runs packer build on a template (the source block and whatever
// follows it) with the tier's env plus extra.
func build(t *testing.T, tr *Tier, template string, extra ...string) packertest.Result {
	t.Helper()
	return startBuild(t, tr, template, extra...).Wait(t, buildTimeout)
}

// startBuild starts packer build as build runs it.
func startBuild(t *testing.T, tr *Tier, template string, extra ...string) *packertest.Proc {
	t.Helper()
	p := packertest.Setup(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "build.pkr.hcl"), []byte(pluginBlock+template), 0o600); err != nil {
		t.Fatal(err)
	}
	env, err := tr.Env()
	if err != nil {
		t.Fatal(err)
	}
	return p.Start(t, dir, append(env, extra...), "build", ".")
}

// buildTimeout bounds one packer run against the tier. A build takes
// 30 s to 2 minutes on an idle 2-core machine; shared with other work
// the real services (Python, 13 daemons) slow down many times over, and
// packertest.Run's five minutes were seen to be too few.
const buildTimeout = 20 * time.Minute

// runPacker is packertest's Run with buildTimeout.
func runPacker(t *testing.T, p *packertest.Packer, dir string, env []string, args ...string) packertest.Result {
	t.Helper()
	return p.Start(t, dir, env, args...).Wait(t, buildTimeout)
}

// uniqueName is a name no earlier run used.
func uniqueName(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) }

// imageNamed is the one image called name, deleted (unprotected first)
// when the test ends.
func imageNamed(t *testing.T, ic *gophercloud.ServiceClient, name string) *images.Image {
	t.Helper()
	img := findImage(t, ic, name)
	t.Cleanup(func() { deleteImage(t, ic, img.ID) })
	return img
}

// findImage is the one image called name.
func findImage(t *testing.T, ic *gophercloud.ServiceClient, name string) *images.Image {
	t.Helper()
	pages, err := images.List(ic, images.ListOpts{Name: name}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := images.ExtractImages(pages)
	if err != nil || len(all) != 1 {
		t.Fatalf("images named %s: %d (%v)", name, len(all), err)
	}
	return &all[0]
}

func deleteImage(t *testing.T, ic *gophercloud.ServiceClient, id string) {
	ctx := context.Background()
	images.Update(ctx, ic, id, images.UpdateOpts{images.ReplaceImageProtected{NewProtected: false}})
	if err := images.Delete(ctx, ic, id).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("deleting image %s: %v", id, err)
	}
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
