package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/buildtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// containerImages are the images of fat-containers.pkr.hcl, as podman
// names them, with the registry's digest.
func containerImages() map[string]string {
	reg, auth := theLab.Env["LAB_REGISTRY"], theLab.Env["LAB_REGISTRY_AUTH"]
	return map[string]string{
		reg + "/library/mysql:8.0.30":               theLab.Registry.Digest("library/mysql:8.0.30"),
		reg + "/opensearchproject/opensearch:2.9.0": theLab.Registry.Digest("opensearchproject/opensearch:2.9.0"),
		auth + "/beats/filebeat-oss:7.12.1":         theLab.RegistryAuth.Digest("beats/filebeat-oss:7.12.1"),
	}
}

// TestContainers builds (running the provisioner twice) an image holding the appliance's three
// container images in the podman user's rootless storage, pulled by the
// VM, then loaded from archives the plugin fetched with both registries
// blocked from the VM; the image booted shows the registry's digests to
// `podman images --digests` as that user, image.json records them, and
// neither the image, the output nor the manifest carries the registry
// password.
func TestContainers(t *testing.T) {
	want := containerImages()
	for _, source := range []string{"vm", "host"} {
		t.Run(source, func(t *testing.T) {
			if source == "host" {
				t.Setenv("PACKER_CACHE_DIR", t.TempDir())
				// the VM still needs the Ark for its packages
				for _, reg := range []string{"registry", "registry-auth"} {
					if err := theLab.SetServerReachableFromVMs(reg, false); err != nil {
						t.Fatal(err)
					}
					defer theLab.SetServerReachableFromVMs(reg, true) //nolint:errcheck // Close removes the rules anyway
				}
			}
			name := fmt.Sprintf("e2e-containers-%s-%d", source, time.Now().Unix())
			manifest := filepath.Join(t.TempDir(), "manifest.json")
			argv := buildtest.SampleArgv(t, theLab) // the registry password must stay off every command line
			r := build(t, []string{"fat-common.pkr.hcl", "fat-containers.pkr.hcl"}, "-var", "image_name="+name, "-var", "content_source="+source,
				"-var", "mysql_digest="+theLab.Registry.Digest("library/mysql:8.0.30"), "-var", "manifest_output="+manifest)
			if r.ExitCode != 0 {
				t.Fatalf("packer build failed:\n%s", r.Output())
			}
			out := r.Output()
			if source == "host" && !strings.Contains(out, "fatimage: containers[2]: resolving "+theLab.Env["LAB_REGISTRY_AUTH"]+"/beats/filebeat-oss:7.12.1 on the host") {
				t.Errorf("no host-side fetch in the output:\n%s", out)
			}
			// the first run installed the three, the second left them alone
			const step = "fatimage: containers: into the users' podman storage"
			first, second := strings.Index(out, step), strings.LastIndex(out, step)
			if first < 0 || first == second {
				t.Fatalf("the containers step did not run twice:\n%s", out)
			}
			if one := stepOutput(out[first:]); strings.Count(one, "installed ") != 3 {
				t.Errorf("the first run did not install 3 images:\n%s", one)
			}
			if two := stepOutput(out[second:]); strings.Count(two, "unchanged ") != 3 || strings.Contains(two, "installed ") {
				t.Errorf("the second run changed images:\n%s", two)
			}
			buildtest.RequireNoSecrets(t, theLab, "the build output", []byte(out))
			seen := buildtest.RequireNoSecretsInArgv(t, argv)
			t.Logf("argv on the VM: %d command lines in %d samples, no secret", seen.CommandLines, seen.Samples)
			// the two pinned by tag only are said to be unverified, the pinned one not
			for i, img := range []string{theLab.Env["LAB_REGISTRY"] + "/opensearchproject/opensearch:2.9.0", theLab.Env["LAB_REGISTRY_AUTH"] + "/beats/filebeat-oss:7.12.1"} {
				if w := fmt.Sprintf("WARNING: containers[%d]: %s is pinned by tag only: the tag resolved to sha256:", i+1, img); !strings.Contains(out, w) {
					t.Errorf("no warning %q in the output", w)
				}
			}
			if strings.Contains(out, "containers[0]: "+theLab.Env["LAB_REGISTRY"]+"/library/mysql:8.0.30 is pinned by tag only") {
				t.Error("the pinned mysql image is warned about")
			}
			img := findImage(t, name)
			labtest.RequireClean(t, theLab)

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_, c, stop := labtest.BootDial(ctx, t, theLab, name+"-check", img.ID)
			got := c.Run(t, "sudo -iu podman podman images --digests --format '{{.Repository}}:{{.Tag}} {{.Digest}}' 2>/dev/null | sort")
			var lines []string
			for ref, d := range want {
				lines = append(lines, ref+" "+d)
			}
			if g, w := strings.Split(got, "\n"), lines; len(g) != len(w) || !containsAll(got, w) {
				t.Errorf("podman images as podman:\n%s\nwant\n%s", got, strings.Join(w, "\n"))
			}
			if owner := c.Run(t, "sudo stat -c %U /var/lib/podman/.local/share/containers/storage"); owner != "podman" {
				t.Errorf("rootless storage owned by %s", owner)
			}
			if root := c.Run(t, "sudo podman images -q 2>/dev/null | wc -l"); root != "0" {
				t.Errorf("root's storage holds %s images", root)
			}
			var info struct {
				Content struct {
					Containers []struct{ Image, User, Digest string } `json:"containers"`
				} `json:"content"`
			}
			if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &info); err != nil {
				t.Fatal(err)
			}
			if len(info.Content.Containers) != 3 {
				t.Errorf("image.json containers %+v", info.Content.Containers)
			}
			for _, ct := range info.Content.Containers {
				if want[ct.Image] == "" || ct.Digest != want[ct.Image] || ct.User != "podman" {
					t.Errorf("image.json container %+v, want digest %s", ct, want[ct.Image])
				}
			}
			stop()
			labtest.RequireClean(t, theLab)

			// the password and the auth (Secrets has both) are nowhere in
			// the image or the manifest
			requireNoSecrets(t, imageFiles(t, img.ID))
			data, err := os.ReadFile(manifest)
			if err != nil {
				t.Fatal(err)
			}
			buildtest.RequireNoSecrets(t, theLab, "the manifest", data)
		})
	}
}

// stepOutput is out up to the next headline of the provisioner (a line
// "==> <build>: fatimage: ..."): one step's output.
func stepOutput(out string) string {
	lines := strings.Split(out, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.Contains(lines[i], ": fatimage: ") {
			return strings.Join(lines[:i], "\n")
		}
	}
	return out
}

func containsAll(s string, lines []string) bool {
	for _, l := range lines {
		if !strings.Contains(s, l) {
			return false
		}
	}
	return true
}

// TestContainersWrongDigest: a digest pin the tag does not resolve to
// fails the build before any package or user work, by the VM or by the
// host, naming the item and both digests, and leaves no image and no
// cloud resource behind.
func TestContainersWrongDigest(t *testing.T) {
	wrong := theLab.Registry.Digest("beats/filebeat-oss:7.12.1")
	mysql := theLab.Env["LAB_REGISTRY"] + "/library/mysql:8.0.30 has digest " + theLab.Registry.Digest("library/mysql:8.0.30") + ", want " + wrong + "; nothing installed"
	for _, source := range []string{"vm", "host"} {
		t.Run(source, func(t *testing.T) {
			t.Setenv("PACKER_CACHE_DIR", t.TempDir())
			name := fmt.Sprintf("e2e-containers-wrong-%s-%d", source, time.Now().Unix())
			r := build(t, []string{"fat-common.pkr.hcl", "fat-containers.pkr.hcl"}, "-var", "image_name="+name, "-var", "content_source="+source,
				"-var", "mysql_digest="+wrong)
			out := r.Output()
			if r.ExitCode == 0 || !regexp.MustCompile(`containers\[0\]: `+regexp.QuoteMeta(mysql)).MatchString(out) {
				t.Fatalf("want a failure naming containers[0] and both digests:\n%s", out)
			}
			if strings.Contains(out, "fatimage: packages") || strings.Contains(out, "fatimage: users") {
				t.Errorf("package or user work ran before the check failed:\n%s", out)
			}
			if source == "host" {
				root, _ := os.UserCacheDir()
				if dir := os.Getenv("PACKER_CACHE_DIR"); dir != "" {
					root = dir
				}
				if entries, _ := filepath.Glob(filepath.Join(root, "fatimage", "oci", "*")); len(entries) != 0 {
					t.Errorf("the cache kept %v", entries)
				}
			}
			requireNoImage(t, name)
			labtest.RequireClean(t, theLab)
		})
	}
}
