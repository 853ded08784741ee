package fatimage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
)

// Open OnDemand's server: the module streams' profiles and the pinned
// ondemand in the one transaction, no module process of their own.
func TestGroupOpenOnDemandPackages(t *testing.T) {
	c := mustGroups(t, []string{"openondemand"}, nil)
	p := c.packagePlan()
	for _, want := range []string{"@nodejs:22/common", "@ruby:3.3/common", "lua-posix", "ondemand-4.1.4", "mod_authnz_pam",
		"certbot", "python3-certbot-apache", "ondemand_exporter"} {
		if !slices.Contains(p.Install, want) {
			t.Errorf("install lacks %s: %v", want, p.Install)
		}
	}
	if len(p.Modules) != 0 {
		t.Errorf("module streams enabled by a process of their own: %v", p.Modules)
	}
	// the CI-only extras are the site's to add
	if slices.Contains(p.Install, "mod_auth_openidc") || slices.Contains(p.Install, "ondemand-dex") {
		t.Errorf("CI-only packages installed: %v", p.Install)
	}
}

// The desktop: pinned TurboVNC, tvncserver left disabled, the screensaver
// kept out, websockify in a python3.9 venv and its run link.
func TestGroupOpenOnDemandDesktop(t *testing.T) {
	c := mustGroups(t, []string{"openondemand_desktop"}, map[string]any{"python_index_url": "http://pypi.lab/simple", "python_index_insecure": true})
	p := c.packagePlan()
	for _, want := range []string{"turbovnc-3.0.1", "nmap-ncat", "python3.9", "dbus-x11", "@Xfce"} {
		if !slices.Contains(p.Install, want) {
			t.Errorf("install lacks %s: %v", want, p.Install)
		}
	}
	if !slices.Equal(p.Remove, []string{"xfce4-screensaver"}) {
		t.Errorf("remove %v", p.Remove)
	}
	if !slices.Contains(c.disabledServices(), "tvncserver") {
		t.Errorf("services %v", c.disabledServices())
	}
	if len(c.PythonEnvs) != 1 {
		t.Fatalf("python_envs %+v", c.PythonEnvs)
	}
	e := c.PythonEnvs[0]
	if e.Path != "/opt/websockify-py39" || e.InterpreterOrDefault() != "python3.9" || e.IndexURL != "http://pypi.lab/simple" ||
		!slices.Equal(e.Requirements, []string{"websockify==0.13.0"}) {
		t.Errorf("websockify venv %+v", e)
	}
	if f, ok := fileAt(c, "/opt/websockify/run"); !ok || f.Symlink != "/opt/websockify-py39/bin/websockify" {
		t.Errorf("run link %+v", f)
	}
}

// Jupyter: the site's requirements file is installed as pinned and
// copied into the venv; a loose pin fails naming the file and line.
func TestGroupOpenOnDemandJupyter(t *testing.T) {
	abs, err := filepath.Abs(applianceDir)
	if err != nil {
		t.Fatal(err)
	}
	req := filepath.Join(abs, "ansible/roles/openondemand/files/jupyter_requirements.txt")
	c := mustGroups(t, []string{"openondemand_jupyter"}, map[string]any{"appliance_dir": abs})
	if !slices.Contains(c.packagePlan().Install, "python3.12") {
		t.Errorf("install %v", c.packagePlan().Install)
	}
	if len(c.PythonEnvs) != 1 {
		t.Fatalf("python_envs %+v", c.PythonEnvs)
	}
	e := c.PythonEnvs[0]
	if e.Path != "/opt/jupyter-py312" || e.InterpreterOrDefault() != "python3.12" || e.RequirementsFile != req || e.IndexURL != python.DefaultIndexURL {
		t.Errorf("jupyter venv %+v", e)
	}
	lines, err := e.RequirementLines()
	if err != nil || !slices.Contains(lines, "jupyterlab==4.6.1") {
		t.Errorf("requirements %v %v", lines, err)
	}
	if f, ok := fileAt(c, "/opt/jupyter-py312/jupyter_requirements.txt"); !ok || f.Source != req || f.Mode != "0644" {
		t.Errorf("requirements copy %+v", f)
	}

	if _, err := prepareGroups(t, []string{"openondemand_jupyter"}, nil); err == nil ||
		!strings.Contains(err.Error(), `group "openondemand_jupyter": appliance_dir is required`) {
		t.Errorf("without appliance_dir: %v", err)
	}
	site := t.TempDir()
	bad := filepath.Join(site, "ansible/roles/openondemand/files/jupyter_requirements.txt")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("jupyter==1.1.1\n# a comment\nnotebook>=7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = prepareGroups(t, []string{"openondemand_jupyter"}, map[string]any{"appliance_dir": site})
	if err == nil || !strings.Contains(err.Error(), `group "openondemand_jupyter": python_envs[0]: requirements_file `+bad+` line 3: requirement "notebook>=7" must be pinned exactly`) {
		t.Errorf("loose pin: %v", err)
	}
}

// RStudio: R, rstudio-server by URL (signed: the GPG check stays on)
// from Posit or the mirror, and its modulefile.
func TestGroupOpenOnDemandRStudio(t *testing.T) {
	const file = "/server/rhel9/x86_64/rstudio-server-rhel-2025.05.1-513-x86_64.rpm"
	c := mustGroups(t, []string{"openondemand_rstudio"}, map[string]any{"rstudio_download_url": "http://releases.lab/"})
	if !slices.Contains(c.packagePlan().Install, "R") {
		t.Errorf("install %v", c.packagePlan().Install)
	}
	if len(c.RPMURLs) != 1 || c.RPMURLs[0].URL != "http://releases.lab"+file || c.RPMURLs[0].DisableGPGCheck || !c.RPMURLs[0].InsecureSkipChecksum {
		t.Errorf("rpm_urls %+v", c.RPMURLs)
	}
	if c := mustGroups(t, []string{"openondemand_rstudio"}, nil); c.RPMURLs[0].URL != "https://download2.rstudio.org"+file {
		t.Errorf("default %s", c.RPMURLs[0].URL)
	}
	f, ok := fileAt(c, "/opt/ohpc/pub/modulefiles/rstudio-server/2025.05.1-513")
	if !ok || !strings.HasPrefix(f.Content, "#%Module") || !strings.Contains(f.Content, "\nprepend-path PATH /usr/lib/rstudio-server/bin\n") {
		t.Errorf("modulefile %+v", f)
	}
}

// code-server: the release RPM, unsigned and unchecksummed as upstream
// ships it (a template entry with a sha256 replaces it), and its
// modulefile.
func TestGroupOpenOnDemandCodeServer(t *testing.T) {
	const file = "/coder/code-server/releases/download/v4.102.2/code-server-4.102.2-amd64.rpm"
	c := mustGroups(t, []string{"openondemand_codeserver"}, map[string]any{"github_releases_url": "http://releases.lab"})
	if len(c.RPMURLs) != 1 || c.RPMURLs[0].URL != "http://releases.lab"+file || !c.RPMURLs[0].DisableGPGCheck || !c.RPMURLs[0].InsecureSkipChecksum {
		t.Errorf("rpm_urls %+v", c.RPMURLs)
	}
	sum := strings.Repeat("c", 64)
	c = mustGroups(t, []string{"openondemand_codeserver"}, map[string]any{
		"rpm_urls": []map[string]any{{"url": "https://mirror.example" + file, "sha256": sum, "disable_gpg_check": true}},
	})
	if len(c.RPMURLs) != 1 || c.RPMURLs[0].SHA256 != sum {
		t.Errorf("the template's pinned entry does not replace the group's: %+v", c.RPMURLs)
	}
	f, ok := fileAt(c, "/opt/ohpc/pub/modulefiles/code-server/4.102.2")
	if !ok || !strings.HasPrefix(f.Content, "#%Module") || !strings.Contains(f.Content, "\nprepend-path PATH /usr/lib/code-server/bin\n") {
		t.Errorf("modulefile %+v", f)
	}
}

// The appliance inventory's OnDemand groups resolve to the built-in
// groups of the same names.
func TestInventoryOpenOnDemandGroups(t *testing.T) {
	clearArkEnv(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"inventory": applianceLayout, "inventory_groups": "fatimage", "appliance_dir": applianceDir}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"openondemand", "openondemand_desktop", "openondemand_jupyter", "openondemand_rstudio", "openondemand_codeserver"} {
		if !slices.Contains(p.plan.setNames, g) {
			t.Errorf("set %s not resolved: %v", g, p.plan.setNames)
		}
	}
}
