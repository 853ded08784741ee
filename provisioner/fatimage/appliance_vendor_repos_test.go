package fatimage

import (
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
)

// nvidiaRepoFile is a .repo file as NVIDIA serves cuda_repo_url's.
const nvidiaRepoFile = `[cuda-rhel9-x86_64]
name=cuda-rhel9-x86_64
baseurl=https://mirror.site.example/cuda/repos/rhel9/x86_64
enabled=1
gpgcheck=1
gpgkey=https://mirror.site.example/cuda/repos/rhel9/x86_64/D42D0685.pub
`

// extraResult is the site's Ansible's resolution for an extra build
// (doca,cuda) whose inventory also puts the host in slurm_recompile and
// lustre, with the site's mirror and pins in its group_vars.
func extraResult() *appliance.Result {
	res := overridesResult()
	res.Groups = []string{"builder", "doca", "cuda", "slurm_recompile", "lustre"}
	val := func(v any) appliance.Value { return appliance.Value{Defined: true, Value: v} }
	res.Values["doca"] = map[string]appliance.Value{"doca_repo_url": val("https://mirror.site.example/doca/3.2.3/rhel9/x86_64/")}
	res.Values["cuda"] = map[string]appliance.Value{
		"cuda_repo_url":             val("https://mirror.site.example/cuda/repos/rhel9/x86_64/cuda-rhel9.repo"),
		"cuda_nvidia_driver_stream": val("620-open"),
		"cuda_nvidia_driver_pkg":    val("nvidia-open-3:620.1.2-1.el9"),
		"cuda_packages":             val([]any{"cuda-toolkit-13.4.0-1", "nvidia-gds", "cmake", "nvidia-fabricmanager-620.1.2-1"}),
	}
	return res
}

// TestPlanFromApplianceVendorRepos: with the site's appliance, the doca
// and cuda repositories come from doca_repo_url and cuda_repo_url as the
// roles add them (no Ark credentials), cuda's pins from the role's
// variables, and slurm_recompile and lustre are left to their roles.
func TestPlanFromApplianceVendorRepos(t *testing.T) {
	c := siteConfig(t)
	av := newApplianceValues(extraResult(), "")
	av.repoFiles = map[string]string{"https://mirror.site.example/cuda/repos/rhel9/x86_64/cuda-rhel9.repo": nvidiaRepoFile}
	p, err := c.plan(av, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.setNames, []string{"always", "doca", "cuda"}) {
		t.Errorf("groups %v: want slurm_recompile and lustre left to their roles", p.setNames)
	}
	var doca, cuda Repo
	for _, r := range p.repos {
		switch r.RepoName {
		case "doca":
			doca = r
		case "cuda-rhel9-x86_64":
			cuda = r
		}
	}
	if doca.RepoFile != "doca" || doca.BaseURL != "https://mirror.site.example/doca/3.2.3/rhel9/x86_64/" || doca.GPGCheck || doca.Credentials != "none" {
		t.Errorf("doca repository %+v: want doca.repo, the site's URL, no GPG check, no credentials", doca)
	}
	if cuda.RepoFile != "cuda-rhel9" || cuda.BaseURL != "https://mirror.site.example/cuda/repos/rhel9/x86_64" || !cuda.GPGCheck ||
		cuda.Options["gpgkey"] != "https://mirror.site.example/cuda/repos/rhel9/x86_64/D42D0685.pub" || cuda.Credentials != "none" || !*cuda.Enabled {
		t.Errorf("cuda repository %+v: want the .repo file's section in cuda-rhel9.repo", cuda)
	}
	for _, want := range []string{"nvidia-open-3:620.1.2-1.el9", "cuda-toolkit-13.4.0-1", "nvidia-fabricmanager-620.1.2-1", "doca-extra"} {
		if !slices.Contains(p.sets.Packages, want) {
			t.Errorf("packages lack %s: %v", want, p.sets.Packages)
		}
	}
	if slices.Contains(p.sets.Packages, "cuda-toolkit-13.3.1-1") || !slices.Equal(p.sets.Modules, []string{"nvidia-driver:620-open"}) {
		t.Errorf("the built-in pins stayed: packages %v, modules %v", p.sets.Packages, p.sets.Modules)
	}
	rec := p.applianceRecord()
	var vars []string
	for _, v := range rec.FromAppliance {
		if strings.HasPrefix(v.Into, "repos/") {
			vars = append(vars, v.Variable+" "+v.Values[0])
		}
	}
	if !slices.Equal(vars, []string{"doca_repo_url https://mirror.site.example/doca/3.2.3/rhel9/x86_64/", "cuda_repo_url https://mirror.site.example/cuda/repos/rhel9/x86_64/cuda-rhel9.repo"}) {
		t.Errorf("image.json from_appliance repositories: %v", vars)
	}

	// no mirror given: an undefined variable names group and variable
	res := extraResult()
	delete(res.Values["doca"], "doca_repo_url")
	res.Values["doca"]["doca_repo_url"] = appliance.Value{}
	av = newApplianceValues(res, "")
	av.repoFiles = map[string]string{"https://mirror.site.example/cuda/repos/rhel9/x86_64/cuda-rhel9.repo": "not a repo file"}
	_, err = c.plan(av, "")
	for _, want := range []string{`group "doca": repository doca: doca_repo_url: not defined`, `group "cuda": cuda_repo_url (https://mirror.site.example/cuda/repos/rhel9/x86_64/cuda-rhel9.repo): line 1: "not a repo file" is neither`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("plan error %v: want %q", err, want)
		}
	}
}

// TestApplianceRequestVendorRepos: the resolution asks for the vendor
// repositories' and cuda's variables in their roles' scopes.
func TestApplianceRequestVendorRepos(t *testing.T) {
	want := map[string][]string{"doca": {"doca_repo_url"}, "cuda": {"cuda_nvidia_driver_pkg", "cuda_nvidia_driver_stream", "cuda_packages", "cuda_repo_url"}}
	for _, q := range applianceRequest().Queries {
		if w, ok := want[q.Role]; ok {
			if !slices.Equal(q.Vars, w) {
				t.Errorf("role %s asks %v, want %v", q.Role, q.Vars, w)
			}
			delete(want, q.Role)
		}
	}
	if len(want) > 0 {
		t.Errorf("no query for %v", want)
	}
}

// TestParseRepoFile: sections, their keys, and what is refused.
func TestParseRepoFile(t *testing.T) {
	repos, err := parseRepoFile("# NVIDIA\n[a]\nbaseurl = http://x/a\npriority=5\nmodule_hotfixes=1\nenabled=0\n\n[b]\nbaseurl=http://x/b\nsslverify=0\n", "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 2 || repos[0].Priority != 5 || !repos[0].ModuleHotfixes || *repos[0].Enabled || repos[1].Options["sslverify"] != "0" || repos[1].RepoFile != "f" {
		t.Errorf("parsed %+v", repos)
	}
	for text, want := range map[string]string{"": "no [section]", "[a]\nname=a\n": "section a has no baseurl", "baseurl=x\n": "line 1", "[a]\nbaseurl=x\npriority=high\n": `priority "high"`} {
		if _, err := parseRepoFile(text, "f"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
}

// TestApplianceExtraValidate: with the site's appliance, an extra build
// (doca,cuda, the appliance's site inventory adding slurm_recompile)
// validates without any vendor repository, and strict names
// slurm_recompile's role, which runs through the site's Ansible; without
// an appliance the repositories stay required.
func TestApplianceExtraValidate(t *testing.T) {
	site := appliancesite.New(t, appliancesite.Overrides, "doca", "cuda")
	raw := strictRaw(site)
	raw["appliance_strict"] = false
	raw["repos"] = []any{goodRepo()}
	var c Config
	if _, err := c.prepare(raw); err != nil {
		t.Errorf("validate of the appliance's extra build: %v", err)
	}
	errs := strings.Join(strictErrors(t, strictRaw(site)), "\n")
	if !strings.Contains(errs, "appliance_strict: role slurm_recompile in ansible/fatimage.yml would run through Ansible (with the site's appliance its role slurm_recompile does group slurm_recompile's work") {
		t.Errorf("strict errors of the extra build:\n%s", errs)
	}
	// the tests' extra environment (no slurm_recompile) validates too
	extra := strictRaw(appliancesite.New(t, appliancesite.Extra, "doca", "cuda"))
	extra["appliance_strict"] = false
	extra["repos"] = []any{goodRepo()}
	var ce Config
	if _, err := ce.prepare(extra); err != nil {
		t.Errorf("validate of the extra environment's build: %v", err)
	}
	clearArkEnv(t)
	var plain Config
	_, err := plain.prepare(map[string]any{"groups": []any{"doca", "cuda"}, "repos": []any{goodRepo()}})
	for _, want := range []string{`group "doca" needs the vendor repository "doca"`, `group "cuda" needs the vendor repository "cuda"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate without an appliance: %v, want %q", err, want)
		}
	}
}

// TestApplianceSiteRoles: in a build from the site's appliance,
// slurm_recompile's and lustre's roles run through Ansible in the install
// phase (after cuda's native install), slurm_recompile with the vars
// fatimage.yml gives it (slurm_recompile_with_nvml), saying why.
func TestApplianceSiteRoles(t *testing.T) {
	s := appliancesite.New(t, appliancesite.Overrides, "doca", "cuda")
	all, err := s.Steps()
	if err != nil {
		t.Fatal(err)
	}
	built := func(g string) bool { return slices.Contains([]string{"always", "doca", "cuda", "dnf_repos"}, g) }
	seen := map[string]bool{}
	for _, a := range applianceSteps(all, built) {
		switch {
		case a.Kind == "role" && a.Name == "cuda" && a.TasksFrom != "facts.yml":
			if a.native != "group cuda" {
				t.Errorf("%s: native %q", a.Label(), a.native)
			}
		case a.Kind == "role" && (a.Name == "slurm_recompile" || a.Name == "lustre" && a.TasksFrom == "install.yml"):
			seen[a.Name] = true
			want := "with the site's appliance its role " + a.Name + " does group " + a.Name + "'s work"
			if a.native != "" || a.phase != phaseInstall || !strings.HasPrefix(a.why, want) {
				t.Errorf("%s: native %q, phase %s, why %q", a.Label(), a.native, a.phase, a.why)
			}
			if _, ok := a.Vars["slurm_recompile_with_nvml"]; a.Name == "slurm_recompile" && !ok {
				t.Errorf("%s: vars %v lack slurm_recompile_with_nvml", a.Label(), a.Vars)
			}
		}
	}
	if !seen["slurm_recompile"] || !seen["lustre"] {
		t.Errorf("steps seen %v", seen)
	}
}
