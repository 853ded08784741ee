package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/packertest"
)

// rpmURLVars are the variables of fat-rpmurl.pkr.hcl: the release
// server's unsigned exporter and signed rstudio-server RPMs and the
// Grafana plugin zip, each with its sha256.
func rpmURLVars(t *testing.T) []string {
	t.Helper()
	var vars []string
	seen := map[string]bool{}
	for _, u := range repos.URLRPMs {
		key := map[string]string{"prometheus-slurm-exporter": "exporter", "rstudio-server": "rstudio"}[u.Name]
		if key == "" || seen[key] {
			continue // the first of a name is the RL9 build (rstudio's rhel8 one follows)
		}
		seen[key] = true
		vars = append(vars, "-var", key+"_url="+theLab.Releases.FileURL(u.Path), "-var", key+"_sha256="+theLab.Releases.SHA256(u.Path))
	}
	g := theLab.Releases.GrafanaPlugins()[0]
	return append(vars, "-var", "grafana_plugin_sha256="+theLab.Releases.SHA256(g.Path()))
}

// rpmURLImageJSON is the part of image.json the RPMs by URL and the
// pinned plugins write.
type rpmURLImageJSON struct {
	Content struct {
		RPMs map[string]struct {
			URL              string `json:"url"`
			NVR              string `json:"nvr"`
			SHA256           string `json:"sha256"`
			ChecksumVerified bool   `json:"checksum_verified"`
			GPGCheck         bool   `json:"gpgcheck"`
		} `json:"rpms"`
		GrafanaPlugins map[string]struct {
			URL    string `json:"url"`
			SHA256 string `json:"sha256"`
		} `json:"grafana_plugins"`
	} `json:"content"`
}

// TestRPMURLsAndGrafanaPin builds with two RPMs by URL and a pinned
// Grafana plugin, fetched by the VM and then by the host with the
// release server (the GitHub, Posit and grafana.com stand-in) blocked
// from the VMs: the RPMs go into the one package transaction (one dnf
// command in all), the plugin is unpacked from its zip without
// grafana-cli, a second run changes nothing, and the booted image holds
// both, recorded in image.json.
func TestRPMURLsAndGrafanaPin(t *testing.T) {
	vars := rpmURLVars(t)
	exporter, rstudio := repos.URLRPMs[0], repos.URLRPMs[1]
	plugin := theLab.Releases.GrafanaPlugins()[0]
	for _, source := range []string{"vm", "host"} {
		t.Run(source, func(t *testing.T) {
			if source == "host" {
				t.Setenv("PACKER_CACHE_DIR", t.TempDir())
				if err := theLab.SetServerReachableFromVMs("releases", false); err != nil {
					t.Fatal(err)
				}
				defer theLab.SetServerReachableFromVMs("releases", true) //nolint:errcheck // Close removes the rule anyway
			}
			name := fmt.Sprintf("e2e-rpmurl-%s-%d", source, time.Now().Unix())
			m := filepath.Join(t.TempDir(), "manifest.json")
			r := build(t, []string{"fat-common.pkr.hcl", "fat-rpmurl.pkr.hcl"},
				append(vars, "-var", "image_name="+name, "-var", "content_source="+source, "-var", "manifest_output="+m)...)
			if r.ExitCode != 0 {
				t.Fatalf("packer build failed:\n%s", r.Output())
			}
			out := r.Output()
			man := readFatManifest(t, m)
			// the same single transaction as without rpm_urls: one dnf
			// command in each run, the staged files installed first (dnf
			// takes local files only as the transaction's first job), then
			// the repository packages, then run
			if man.DNFRuns != 1 || strings.Count(out, "fatimage: done: 1 dnf command(s)") != 2 ||
				!oneTransaction.MatchString(out) {
				t.Errorf("want the RPMs in the one transaction (%d dnf commands):\n%s", man.DNFRuns, out)
			}
			if !strings.Contains(out, "WARNING: rpm_urls[0]: disable_gpg_check = true: the signature of "+theLab.Releases.FileURL(exporter.Path)+" is not checked") {
				t.Errorf("no warning for the unchecked signature:\n%s", out)
			}
			if strings.Contains(out, "grafana-cli") || strings.Count(out, "installed grafana plugin "+plugin.ID+" "+plugin.Version) != 1 {
				t.Errorf("the pinned plugin was not unpacked from its zip once:\n%s", out)
			}
			// the second run changed nothing
			second := out[strings.LastIndex(out, "fatimage: packages:"):]
			if !strings.Contains(second, "Nothing to do") || !strings.Contains(second, "unchanged grafana plugin "+plugin.ID+" "+plugin.Version) {
				t.Errorf("the second run changed the image:\n%s", second)
			}
			if source == "host" && !strings.Contains(out, "fatimage: downloading "+theLab.Releases.FileURL(plugin.Path())) {
				t.Errorf("no host-side fetch of the plugin:\n%s", out)
			}
			img := findImage(t, name)
			labtest.RequireClean(t, theLab)

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_, c, stop := labtest.BootDial(ctx, t, theLab, name+"-check", img.ID)
			got := c.Run(t, "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' "+exporter.Name+" "+rstudio.Name+"; "+
				"sudo stat -c '%U:%G %a' /var/lib/grafana/plugins/"+plugin.ID+"/gpx_lab_linux_amd64; "+
				"sudo grep -c lab_stand_in /var/lib/grafana/plugins/"+plugin.ID+"/plugin.json || true")
			want := exporter.Name + "-" + exporter.EVR + "\n" + rstudio.Name + "-" + rstudio.EVR + "\nroot:root 755\n0"
			if got != want {
				t.Errorf("the image holds\n%s\nwant\n%s", got, want)
			}
			var info rpmURLImageJSON
			if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &info); err != nil {
				t.Fatal(err)
			}
			e, rs, gp := info.Content.RPMs[exporter.Name], info.Content.RPMs[rstudio.Name], info.Content.GrafanaPlugins[plugin.ID]
			if e.NVR != exporter.Name+"-"+exporter.EVR || e.SHA256 != theLab.Releases.SHA256(exporter.Path) || e.GPGCheck || !e.ChecksumVerified ||
				rs.NVR != rstudio.Name+"-"+rstudio.EVR || !rs.GPGCheck || rs.URL != theLab.Releases.FileURL(rstudio.Path) ||
				gp.SHA256 != theLab.Releases.SHA256(plugin.Path()) || !strings.HasPrefix(gp.URL, theLab.Releases.FileURL(plugin.Path())) {
				t.Errorf("image.json content %+v", info.Content)
			}
			stop()
			labtest.RequireClean(t, theLab)
		})
	}
}

// TestRPMURLWrongPins: a wrong sha256 of an RPM or of the plugin zip, or
// an unsigned RPM without disable_gpg_check, fails the build before any
// package work, naming the item and the cause, and leaves no image and
// no cloud resource behind.
func TestRPMURLWrongPins(t *testing.T) {
	vars := rpmURLVars(t)
	bad := strings.Repeat("2", 64)
	for _, tc := range []struct {
		name, source string
		override     []string
		want         *regexp.Regexp
	}{
		{"rpm-vm", "vm", []string{"exporter_sha256=" + bad},
			regexp.MustCompile(`rpm_urls\[0\]: sha256 mismatch: want 2{64}, got [0-9a-f]{64} \(http://\S+\); nothing installed`)},
		{"rpm-host", "host", []string{"exporter_sha256=" + bad},
			regexp.MustCompile(`rpm_urls\[0\]: sha256 mismatch: want 2{64}, got [0-9a-f]{64} \(http://\S+\); nothing installed`)},
		{"unsigned", "vm", []string{"exporter_disable_gpg_check=false"},
			regexp.MustCompile(`rpm_urls\[0\] \(http://\S+\): the package is not signed: set disable_gpg_check = true to install it unchecked; nothing installed`)},
		{"plugin-host", "host", []string{"grafana_plugin_sha256=" + bad},
			regexp.MustCompile(`grafana_plugins: grafana-opensearch-datasource 2\.8\.1: sha256 mismatch: want 2{64}, got [0-9a-f]{64} \(http://\S+\); nothing installed`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PACKER_CACHE_DIR", t.TempDir())
			name := fmt.Sprintf("e2e-rpmurl-%s-%d", tc.name, time.Now().Unix())
			args := append(slices.Clone(vars), "-var", "image_name="+name, "-var", "content_source="+tc.source)
			for _, o := range tc.override {
				args = append(args, "-var", o)
			}
			requireFailedBeforePackages(t, build(t, []string{"fat-common.pkr.hcl", "fat-rpmurl.pkr.hcl"}, args...), tc.want, name)
		})
	}
}

// requireFailedBeforePackages: the build failed with an error matching
// want before any package or user work, and left no image named name and
// no cloud resource.
func requireFailedBeforePackages(t *testing.T, r packertest.Result, want *regexp.Regexp, name string) {
	t.Helper()
	out := r.Output()
	if r.ExitCode == 0 || !want.MatchString(out) {
		t.Fatalf("want a failure matching %s:\n%s", want, out)
	}
	if strings.Contains(out, "fatimage: packages") || strings.Contains(out, "fatimage: users") {
		t.Errorf("package or user work ran before the check failed:\n%s", out)
	}
	requireNoImage(t, name)
	labtest.RequireClean(t, theLab)
}

// oneTransaction matches the dnf transaction of fat-rpmurl.pkr.hcl as the
// build output shows it: the staged RPM files' install, the repository
// packages' install and the one run.
var oneTransaction = regexp.MustCompile(`dnf transaction:\n[^\n]*install /var/tmp/fatimage-[^ ]+/rpm-url-0\.rpm /var/tmp/fatimage-[^ ]+/rpm-url-1\.rpm\n[^\n]*install [^\n]*grafana[^\n]*oddjob[^\n]*\n[^\n]*  run\n`)
