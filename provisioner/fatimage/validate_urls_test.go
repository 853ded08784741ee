package fatimage

import (
	"strings"
	"testing"
)

// urlSecret is the password every case puts in a URL's user info: no
// error may show it.
const urlSecret = "S3cret-in-URL"

// TestEveryURLOptionRefusesCredentials: user info in any URL option is
// refused at Prepare, naming the field, and the message never shows it
// (issue #26 item 3).
func TestEveryURLOptionRefusesCredentials(t *testing.T) {
	clearArkEnv(t)
	cred := "https://user:" + urlSecret + "@mirror.example"
	cases := []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"release_base_url", map[string]any{"release_base_url": cred + "/prometheus"}, `release_base_url "https://mirror.example/prometheus" must not carry credentials`},
		{"binaries url", map[string]any{"binaries": []map[string]any{{"name": "foo", "version": "1.0.0", "sha256": goodSHA, "url": cred + "/foo-{{.Version}}.tgz", "files": []string{"foo"}}}}, `binaries[0] (foo): url "https://mirror.example/foo-1.0.0.tgz" must not carry credentials`},
		{"git_base_url", map[string]any{"git_base_url": cred}, `git_base_url "https://mirror.example" must not carry credentials`},
		{"github_releases_url", map[string]any{"github_releases_url": cred}, `github_releases_url "https://mirror.example" must not carry credentials`},
		{"python_index_url", map[string]any{"python_index_url": cred + "/simple"}, `python_index_url "https://mirror.example/simple" must not carry credentials`},
		{"rstudio_download_url", map[string]any{"rstudio_download_url": cred}, `rstudio_download_url "https://mirror.example" must not carry credentials`},
		{"grafana_plugin_url", map[string]any{"grafana_plugin_url": cred}, `grafana_plugin_url "https://mirror.example" must not carry credentials`},
		{"grafana_dashboards_url", map[string]any{"grafana_dashboards_url": cred}, `grafana_dashboards_url "https://mirror.example" must not carry credentials`},
		{"netlib_url", map[string]any{"netlib_url": cred}, `netlib_url "https://mirror.example" must not carry credentials`},
		{"downloads url", map[string]any{"downloads": []map[string]any{{"url": cred + "/f", "sha256": goodSHA, "destination": "/opt/f"}}}, `downloads[0]: url "https://mirror.example/f" must not carry credentials`},
		{"rpm_urls url", map[string]any{"rpm_urls": []map[string]any{{"url": cred + "/x.rpm", "sha256": goodSHA}}}, `rpm_urls[0]: url "https://mirror.example/x.rpm" must not carry credentials`},
		{"git_checkouts repo", map[string]any{"git_checkouts": []map[string]any{{"repo": cred + "/a.git", "tag": "v1", "destination": "/opt/a"}}}, `git_checkouts[0]: repo "https://mirror.example/a.git" must not carry credentials`},
		{"python index_url", map[string]any{"python_envs": []map[string]any{{"path": "/opt/v", "index_url": cred + "/simple", "requirements": []string{"a==1"}}}}, `python_envs[0]: index_url "https://mirror.example/simple" must not carry credentials`},
		{"python git requirement", map[string]any{"python_envs": []map[string]any{{"path": "/opt/v", "requirements": []string{"x @ git+" + cred + "/x.git@v1"}}}}, `python_envs[0]: git requirement "x @ git+https://xxxxx@mirror.example/x.git@v1" must be`},
		{"repos baseurl", map[string]any{"repos": []any{map[string]any{"name": "b", "repo_file": "rocky", "repo_name": "b", "baseurl": cred + "/baseos"}}}, `repos[0]: baseurl "https://mirror.example/baseos" must not carry credentials (user info before @): they would show in the output and in command lines on the VM; set repo_username and repo_password`},
		{"repos baseurl bad scheme", map[string]any{"repos": []any{map[string]any{"name": "b", "repo_file": "rocky", "repo_name": "b", "baseurl": "ftp://user:" + urlSecret + "@h/b"}}}, `repos[0]: baseurl "ftp://xxxxx@h/b" must start with`},
		{"container_registry", map[string]any{"container_registry": "user:" + urlSecret + "@registry.example"}, `container_registry "xxxxx@registry.example" must be host or host:port`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p Provisioner
			err := p.Prepare(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
			if strings.Contains(err.Error(), urlSecret) {
				t.Fatalf("the error shows the URL's password: %v", err)
			}
		})
	}
}

// TestCredentialsRefuseControlCharacters: a newline (or any control
// character) in a credential would end the line of the repo file or curl
// config it is written into and start another one.
func TestCredentialsRefuseControlCharacters(t *testing.T) {
	runPrepareCases(t, []prepareCase{
		{"repo_password newline", map[string]any{"repos": []any{goodRepo()}, "repo_username": "u", "repo_password": "pw\nproxy = http://evil"}, "repo_password: must not contain control characters"},
		{"repo_username tab", map[string]any{"repos": []any{goodRepo()}, "repo_username": "u\tx", "repo_password": "pw"}, "repo_username: must not contain control characters"},
		{"registry password newline", map[string]any{"container_registries": []map[string]any{{"host": "r.example", "username": "u", "password": "pw\nurl = http://evil"}}}, "container_registries[0]: password: must not contain control characters"},
		{"registry username escape", map[string]any{"container_registries": []map[string]any{{"host": "r.example", "username": "u\x1b", "password": "pw"}}}, "container_registries[0]: username: must not contain control characters"},
	})
}

func TestWithoutUserInfo(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@h/x":       "https://xxxxx@h/x",
		"https://h/x":           "https://h/x",
		"https://u@p@h":         "https://xxxxx@h",
		"no url":                "no url",
		"x @ git+https://u:p@h": "x @ git+https://xxxxx@h",
		"http://u:p@h/":         "http://xxxxx@h/",
	} {
		if got := withoutUserInfo(in); got != want {
			t.Errorf("withoutUserInfo(%q) = %q, want %q", in, got, want)
		}
	}
}
