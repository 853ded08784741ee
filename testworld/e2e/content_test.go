package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
)

// contentVars are the variables of fat-content.pkr.hcl: the pin of
// slurm-openstack-tools v3.0 from the lab's git server, node_exporter's
// release tarball as an archive and its sha256sums.txt as a file, each
// with its sha256.
func contentVars(t *testing.T) (vars []string, fileSum string) {
	t.Helper()
	b := theLab.Releases.Binaries()[0]
	resp, err := http.Get(theLab.Releases.ChecksumsURL(b))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %s", theLab.Releases.ChecksumsURL(b), err, resp.Status)
	}
	sum := sha256.Sum256(data)
	fileSum = hex.EncodeToString(sum[:])
	return []string{
		"-var", "python_requirements=" + pythonRequirements(""),
		"-var", "slurm_tools_commit=" + theLab.Git.Commit("stackhpc/slurm-openstack-tools", "v3.0"),
		"-var", "archive_url=" + theLab.Releases.TarballURL(b),
		"-var", "archive_sha256=" + theLab.Releases.Checksums()[b.Tarball()],
		"-var", "file_url=" + theLab.Releases.ChecksumsURL(b),
		"-var", "file_sha256=" + fileSum,
	}, fileSum
}

// pythonRequirements pins jupyterlab 4.6.1, notebook 7.6.0 and
// jupyter_server 2.20.0 with the hashes of the lab's wheels, as an HCL
// list; a non-empty badHash replaces jupyterlab's.
func pythonRequirements(badHash string) string {
	want := map[string]string{"jupyterlab": "4.6.1", "notebook": "7.6.0", "jupyter_server": "2.20.0"}
	var lines []string
	for _, d := range theLab.PyPI.Dists() {
		if want[d.Name] != d.Version {
			continue
		}
		sum := theLab.PyPI.WheelSHA256(d)
		if d.Name == "jupyterlab" && badHash != "" {
			sum = badHash
		}
		lines = append(lines, fmt.Sprintf("%q", d.Name+"=="+d.Version+" --hash=sha256:"+sum))
	}
	return "[" + strings.Join(lines, ", ") + "]"
}

// contentImageJSON is the part of image.json the content kinds write.
type contentImageJSON struct {
	Content struct {
		Git map[string]struct {
			Repo, Ref, Commit string
		} `json:"git"`
		Downloads map[string]struct {
			URL    string `json:"url"`
			SHA256 string `json:"sha256"`
		} `json:"downloads"`
		Python map[string][]string `json:"python"`
		System struct {
			Units      map[string]string `json:"units"`
			Files      []string          `json:"files"`
			KernelArgs []string          `json:"kernel_args"`
		} `json:"system"`
	} `json:"content"`
}

// TestContentKinds builds an image with every content kind and system
// settings, twice in one build, by the VM and then by the host with every lab content server
// blocked from the VM, and inspects each image booted.
func TestContentKinds(t *testing.T) {
	vars, fileSum := contentVars(t)
	for _, source := range []string{"vm", "host"} {
		t.Run(source, func(t *testing.T) {
			if source == "host" {
				t.Setenv("PACKER_CACHE_DIR", t.TempDir())
				// every content server but Ark, which serves the dnf repositories
				for _, n := range theLab.ContentServers() {
					if n == "ark" {
						continue
					}
					if err := theLab.SetServerReachableFromVMs(n, false); err != nil {
						t.Fatal(err)
					}
					defer theLab.SetServerReachableFromVMs(n, true) //nolint:errcheck // Close removes the rules anyway
				}
			}
			name := fmt.Sprintf("e2e-content-%s-%d", source, time.Now().Unix())
			r := build(t, []string{"fat-common.pkr.hcl", "fat-content.pkr.hcl"}, append(vars, "-var", "image_name="+name, "-var", "content_source="+source)...)
			if r.ExitCode != 0 {
				t.Fatalf("packer build failed:\n%s", r.Output())
			}
			out := r.Output()
			if !strings.Contains(out, "WARNING: git_checkouts[2]: branch master of "+theLab.Env["LAB_GIT_URL"]+"/OSC/bc_example_jupyter.git is not reproducible") {
				t.Errorf("no warning for the branch checkout:\n%s", out)
			}
			if source == "host" && (!strings.Contains(out, "fatimage: cloning "+theLab.Env["LAB_GIT_URL"]) || !strings.Contains(out, "fatimage: downloading "+theLab.Releases.URL())) {
				t.Errorf("no host-side fetch in the output:\n%s", out)
			}
			// the second run left everything as the first put it
			from := strings.LastIndex(out, "fatimage: content (git checkouts")
			if from < 0 || !strings.Contains(out[from:], "fatimage: cleanup") {
				t.Fatalf("no second content run followed by a cleanup in the output:\n%s", out)
			}
			second := out[from:]
			second = second[:strings.Index(second, "fatimage: cleanup")]
			// 3 git checkouts, 2 downloads, a venv, 9 system files (7 of the
			// template, 2 of the podman group: its limits file is replaced
			// by the template's of that name), 3 unit states, kernel args
			if n := strings.Count(second, "unchanged "); n != 19 || strings.Contains(second, "grub2-mkconfig") || strings.Contains(second, "installed /") ||
				strings.Contains(second, "wrote /") || strings.Contains(second, "daemon-reload") {
				t.Errorf("the second run changed content (%d unchanged):\n%s", n, second)
			}
			img := findImage(t, name)
			labtest.RequireClean(t, theLab)

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_, c, stop := labtest.BootDial(ctx, t, theLab, name+"-check", img.ID)
			pin := theLab.Git.Commit("stackhpc/slurm-openstack-tools", "v3.0")
			rstudio := theLab.Git.Commit("stackhpc/ood-stackhpc-rstudio", "2025.08.1")
			jupyter := theLab.Git.Commit("OSC/bc_example_jupyter", "master")
			git := "sudo git -c safe.directory='*' -C "
			got := c.Run(t, git+"/opt/slurm-tools-src rev-parse HEAD; "+git+"/var/www/ood/apps/sys/rstudio rev-parse HEAD; "+
				git+"/var/www/ood/apps/sys/jupyter rev-parse HEAD; cat /opt/slurm-tools-src/VERSION; "+
				"stat -c '%U:%G' /var/www/ood/apps/sys/rstudio /opt/node_exporter /opt/node_exporter/node_exporter /etc/fatimage-e2e/sha256sums.txt; "+
				"stat -c %a /etc/fatimage-e2e/sha256sums.txt; /opt/node_exporter/node_exporter --version | head -n1; "+
				"sudo sha256sum /etc/fatimage-e2e/sha256sums.txt | cut -d' ' -f1")
			want := strings.Join([]string{pin, rstudio, jupyter, "v3.0", "podman:podman", "podman:podman", "podman:podman", "root:root", "640"}, "\n")
			if !strings.HasPrefix(got, want+"\n") || !strings.HasSuffix(got, fileSum) || !strings.Contains(got, "1.11.1") {
				t.Errorf("the image holds\n%s\nwant\n%s\n<node_exporter 1.11.1 --version>\n%s", got, want, fileSum)
			}
			got = c.Run(t, "systemctl is-enabled mysql.service filebeat.service firewalld.service || true; readlink /etc/systemd/system/firewalld.service; "+
				"cat /etc/systemd/system/mysql.service.d/slurm_app.conf /etc/sysctl.d/90-opensearch.conf /etc/modprobe.d/appliance.conf "+
				"/etc/tmpfiles.d/podman.conf /etc/security/limits.d/custom.conf; stat -c %a /etc/systemd/system/mysql.service.d; "+
				"sudo grubby --info=ALL | grep -c '^args=.* rd.auto=1'; grep -c '^GRUB_CMDLINE_LINUX=.* rd.auto=1\"$' /etc/default/grub; grep -c 'kernelopts=.* rd.auto=1' /boot/grub2/grub.cfg")
			for _, w := range []string{"disabled\nenabled\nmasked\n/dev/null\n# appliance state directory drop-in\n", "vm.max_map_count = 262144\n",
				"install esp4 /bin/false\ninstall esp6 /bin/false\ninstall rxrpc /bin/false\ninstall ip6_tunnel /bin/false\ninstall act_pedit /bin/false\ninstall openvswitch /bin/false\n",
				"d /run/podman 0755 podman podman -\npodman soft nofile 65536\n755\n1\n1\n1"} {
				if !strings.Contains(got, w) {
					t.Errorf("system settings in the image lack %q:\n%s", w, got)
				}
			}
			// the venv imports its packages at the pins, as any user
			if got := c.Run(t, "stat -c %U:%G /opt/jupyter-venv; /opt/jupyter-venv/bin/python -c 'import jupyterlab, notebook, jupyter_server; print(jupyterlab.__version__, notebook.__version__, jupyter_server.__version__)'"); got != "podman:podman\n4.6.1 7.6.0 2.20.0" {
				t.Errorf("the venv: %s", got)
			}
			var info contentImageJSON
			if err := json.Unmarshal([]byte(c.Run(t, "cat /var/lib/image/image.json")), &info); err != nil {
				t.Fatal(err)
			}
			g := info.Content.Git
			if g["/opt/slurm-tools-src"].Commit != pin || g["/opt/slurm-tools-src"].Ref != "v3.0" || g["/var/www/ood/apps/sys/jupyter"].Commit != jupyter ||
				g["/var/www/ood/apps/sys/jupyter"].Ref != "master" || info.Content.Downloads["/etc/fatimage-e2e/sha256sums.txt"].SHA256 != fileSum ||
				len(info.Content.Downloads) != 2 || len(g) != 3 || info.Content.System.Units["firewalld.service"] != "masked" || len(info.Content.System.Files) != 9 ||
				strings.Join(info.Content.System.KernelArgs, " ") != "rd.auto=1" || len(info.Content.Python["/opt/jupyter-venv"]) != 3 {
				t.Errorf("image.json content %+v", info.Content)
			}
			stop()
			labtest.RequireClean(t, theLab)
		})
	}
}

// TestContentWrongPins: a wrong commit pin or sha256 fails the build
// before any package work, names the item and the cause, and leaves no
// image and no cloud resource behind, whoever fetches.
func TestContentWrongPins(t *testing.T) {
	vars, _ := contentVars(t)
	for _, tc := range []struct {
		name, source, override string
		want                   *regexp.Regexp
	}{
		{"git-vm", "vm", "slurm_tools_commit=" + strings.Repeat("1", 40),
			regexp.MustCompile(`git_checkouts\[0\]: refs/tags/v3\.0 is at commit [0-9a-f]{40}, want 1{40}; nothing installed`)},
		{"git-host", "host", "slurm_tools_commit=" + strings.Repeat("1", 40),
			regexp.MustCompile(`git_checkouts\[0\]: v3\.0 is at commit [0-9a-f]{40}, want 1{40}; nothing installed`)},
		{"download-vm", "vm", "archive_sha256=" + strings.Repeat("2", 64),
			regexp.MustCompile(`downloads\[0\]: sha256 mismatch: want 2{64}, got [0-9a-f]{64} \(http://\S+\); nothing installed`)},
		{"download-host", "host", "archive_sha256=" + strings.Repeat("2", 64),
			regexp.MustCompile(`downloads\[0\]: sha256 mismatch: want 2{64}, got [0-9a-f]{64} \(http://\S+\); nothing installed`)},
		{"python-host", "host", "python_requirements=" + pythonRequirements(strings.Repeat("3", 64)),
			regexp.MustCompile(`python_envs\[0\]: pip download on the host: exit status 1; nothing installed(.|\n)*THESE PACKAGES DO NOT MATCH THE HASHES`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PACKER_CACHE_DIR", t.TempDir())
			name := fmt.Sprintf("e2e-content-%s-%d", tc.name, time.Now().Unix())
			requireFailedBeforePackages(t, build(t, []string{"fat-common.pkr.hcl", "fat-content.pkr.hcl"},
				append(vars, "-var", tc.override, "-var", "image_name="+name, "-var", "content_source="+tc.source)...), tc.want, name)
		})
	}
}
