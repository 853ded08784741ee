package fatimage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
)

func TestPythonGitRequirements(t *testing.T) {
	for _, tc := range []struct {
		req  string
		want python.GitRequirement
		ok   bool
	}{
		{"slurm-openstack-tools @ git+https://github.com/stackhpc/slurm-openstack-tools.git@v3.0", python.GitRequirement{Name: "slurm-openstack-tools", URL: "https://github.com/stackhpc/slurm-openstack-tools.git", Ref: "v3.0"}, true},
		{"git+https://github.com/stackhpc/slurm-openstack-tools.git@v3.0#egg=slurm_openstack_tools", python.GitRequirement{Name: "slurm_openstack_tools", URL: "https://github.com/stackhpc/slurm-openstack-tools.git", Ref: "v3.0"}, true},
		{"x @ git+https://h/r.git", python.GitRequirement{}, false},            // no ref: follows the branch
		{"x @ git+https://user:pw@h/r.git@v1", python.GitRequirement{}, false}, // credentials
		{"x @ git+ssh://git@h/r.git@v1", python.GitRequirement{}, false},       // only http(s)
		{"requests==2.32.3", python.GitRequirement{}, false},
	} {
		g, ok := python.ParseGitRequirement(tc.req)
		if ok != tc.ok || g != tc.want {
			t.Errorf("%q: %+v %v, want %+v %v", tc.req, g, ok, tc.want, tc.ok)
		}
	}
	env := func(reqs ...string) map[string]any {
		return map[string]any{"python_envs": []map[string]any{{"path": "/opt/x", "requirements": reqs}}}
	}
	for _, tc := range []struct {
		raw  map[string]any
		want string
	}{
		{env("x @ git+https://h/r.git"), "python_envs[0]: git requirement \"x @ git+https://h/r.git\" must be `name @ git+https://host/repo.git@<tag or commit>`"},
		{env("x @ git+https://h/r.git@v1", "y==1 --hash=sha256:"+strings.Repeat("a", 64)), "python_envs[0]: x is a git requirement: pip cannot check hashes"},
		{func() map[string]any { m := env("x @ git+https://h/r.git@v1"); m["content_source"] = "host"; return m }(), "python_envs[0]: x is a git requirement, which the VM's pip clones and builds: content_source = \"host\""},
	} {
		_, err := prepareGroups(t, nil, tc.raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %s", tc.raw, err, tc.want)
		}
	}
}

// rebuild/slurm_stats: /opt/slurm-tools in every fat build (the builder
// is in slurm_stats), slurm-openstack-tools at its tag with pinned
// dependencies; both groups' identical envs are one.
func TestGroupSlurmTools(t *testing.T) {
	c := mustGroups(t, []string{"slurm_stats", "rebuild"}, map[string]any{"git_base_url": "http://git.lab.invalid/", "python_index_url": "http://pypi.lab.invalid/simple", "python_index_insecure": true})
	if len(c.PythonEnvs) != 1 {
		t.Fatalf("python_envs %+v", c.PythonEnvs)
	}
	e := c.PythonEnvs[0]
	g := e.GitRequirements()
	if e.Path != "/opt/slurm-tools" || e.InterpreterOrDefault() != "python3" || e.Owner != "" || e.IndexURL != "http://pypi.lab.invalid/simple" ||
		len(g) != 1 || g[0] != (python.GitRequirement{Name: "slurm-openstack-tools", URL: "http://git.lab.invalid/stackhpc/slurm-openstack-tools.git", Ref: "v3.0"}) ||
		strings.Join(e.Requirements[1:], " ") != "pbr==6.1.1 openstacksdk==4.1.0 ClusterShell==1.9.3" {
		t.Errorf("slurm-tools %+v", e)
	}
	// the install reports the commit; image.json records it with the pin
	out := "installed python packages into /opt/slurm-tools\npython-git-commit python_envs[0] slurm-openstack-tools " + strings.Repeat("ab", 20) + "\n"
	s := &state{cfg: c.cfg, plan: c, content: contentState{installed: map[string]string{"python_envs": out}}}
	if err := s.recordKind(kindPython); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s.imageContentRecord())
	for _, want := range []string{`"python_git":{"/opt/slurm-tools slurm-openstack-tools":{"repo":"http://git.lab.invalid/stackhpc/slurm-openstack-tools.git","ref":"v3.0","commit":"` + strings.Repeat("ab", 20) + `"}}`,
		`"/opt/slurm-tools":["slurm-openstack-tools @ git+http://git.lab.invalid/stackhpc/slurm-openstack-tools.git@v3.0","pbr==6.1.1"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("image.json content %s\nlacks %s", b, want)
		}
	}
	// no commit reported: the step fails naming the requirement
	if _, err := python.ParseGitCommits("python-git-commit python_envs[0] slurm-openstack-tools \n", c.PythonEnvs); err == nil ||
		!strings.Contains(err.Error(), "python_envs[0]: slurm-openstack-tools: pip did not record the commit") {
		t.Errorf("missing commit: %v", err)
	}
	fat := mustGroups(t, []string{"fatimage"}, map[string]any{"appliance_dir": applianceDir})
	if !hasEnv(fat.PythonEnvs, "/opt/slurm-tools") {
		t.Error("the fatimage expansion has no /opt/slurm-tools")
	}
	// with the host fetching content, a git requirement fails validate
	_, err := prepareGroups(t, []string{"slurm_stats"}, map[string]any{"content_source": "host"})
	if err == nil || !strings.Contains(err.Error(), `group "slurm_stats": python_envs[0]: slurm-openstack-tools is a git requirement`) {
		t.Errorf("host: %v", err)
	}
	if s := installScript(t, python.Kind{}, c.PythonEnvs).calls.String(); !strings.Contains(s, "fatimage_pip_git_commit 'python_envs[0]' '/opt/slurm-tools/bin/python' 'slurm-openstack-tools'\n") {
		t.Error(s)
	}
}

func hasEnv(es []python.PythonEnv, p string) bool {
	for _, e := range es {
		if e.Path == p {
			return true
		}
	}
	return false
}
