package openstack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/cloud"
)

// authLab is a cloud whose Keystone has alice in domain Users with her
// project "science" in domain Projects (as Horizon sites with separate
// user and project domains), and bob with user and project in Users.
func authLab(t *testing.T) *lab {
	return newLab(t, func(o *cloud.Options) {
		o.Users = []cloud.User{
			{Name: "lab", Password: "lab-password", Project: "lab", Domain: "Default"},
			{Name: "alice", Password: "alice-pw", Domain: "Users", Project: "science", ProjectDomain: "Projects",
				AppCredentials: []cloud.AppCredential{{ID: "ac-alice", Name: "ci", Secret: "alice-ac"}}},
			{Name: "bob", Password: "bob-pw", Domain: "Users", Project: "physics"},
		}
	})
}

// authCase is one way a site authenticates: its environment, clouds.yaml
// (and secure.yaml) and template options.
type authCase struct {
	name          string
	env           map[string]string
	clouds, secur string
	kv            []any
	// wantUser/wantProject is who the token is for; wantErr a prefix of the
	// Prepare or authentication error instead.
	wantUser, wantProject, wantErr string
}

func TestAuthenticationMatrix(t *testing.T) {
	l := authLab(t)
	url := l.c.AuthURL()
	scienceID := projectIDOf(t, l, "alice", "alice-pw", "Users", "science", "projects")
	aliceToken := tokenFor(t, url, gophercloud.AuthOptions{Username: "alice", Password: "alice-pw", DomainName: "Users"})
	horizon := map[string]string{ // what Horizon's "OpenStack RC File" sets
		"OS_AUTH_URL": url, "OS_USERNAME": "alice", "OS_PASSWORD": "alice-pw", "OS_PROJECT_ID": scienceID,
		"OS_PROJECT_NAME": "science", "OS_USER_DOMAIN_NAME": "Users", "OS_PROJECT_DOMAIN_ID": "projects",
		"OS_REGION_NAME": "RegionOne", "OS_INTERFACE": "public", "OS_IDENTITY_API_VERSION": "3",
	}
	alice := func(kv ...string) map[string]string {
		m := map[string]string{"OS_AUTH_URL": url, "OS_USERNAME": "alice", "OS_PASSWORD": "alice-pw", "OS_PROJECT_NAME": "science"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	horizonYAML := `clouds:
  openstack:
    auth:
      auth_url: ` + url + `
      username: alice
      project_id: ` + scienceID + `
      project_name: science
      user_domain_name: Users
      project_domain_id: projects
    region_name: RegionOne
    interface: public
    identity_api_version: 3
`
	namesYAML := strings.Replace(horizonYAML, "      project_id: "+scienceID+"\n", "", 1)
	for _, tc := range []authCase{
		{name: "Horizon openrc v3", env: horizon, wantUser: "alice", wantProject: "science"},
		{name: "openrc domain names", env: alice("OS_USER_DOMAIN_NAME", "Users", "OS_PROJECT_DOMAIN_NAME", "Projects"), wantUser: "alice", wantProject: "science"},
		{name: "openrc domain ids", env: alice("OS_USER_DOMAIN_ID", "users", "OS_PROJECT_DOMAIN_ID", "projects"), wantUser: "alice", wantProject: "science"},
		{name: "openrc user domain id, project domain name", env: alice("OS_USER_DOMAIN_ID", "users", "OS_PROJECT_DOMAIN_NAME", "Projects"), wantUser: "alice", wantProject: "science"},
		{name: "openrc user domain name, project domain id", env: alice("OS_USER_DOMAIN_NAME", "Users", "OS_PROJECT_DOMAIN_ID", "projects"), wantUser: "alice", wantProject: "science"},
		{name: "openrc project id, no project domain", env: alice("OS_USER_DOMAIN_NAME", "Users", "OS_PROJECT_ID", scienceID, "OS_PROJECT_NAME", ""), wantUser: "alice", wantProject: "science"},
		{name: "openrc one domain for both", env: map[string]string{"OS_AUTH_URL": url, "OS_USERNAME": "bob", "OS_PASSWORD": "bob-pw", "OS_PROJECT_NAME": "physics", "OS_DOMAIN_NAME": "Users"}, wantUser: "bob", wantProject: "physics"},
		{name: "openrc v2 style, no domains", env: map[string]string{"OS_AUTH_URL": url, "OS_USERNAME": "lab", "OS_PASSWORD": "lab-password", "OS_TENANT_NAME": "lab"}, wantUser: "lab", wantProject: "lab"},
		{name: "one domain where there are two", env: alice("OS_DOMAIN_NAME", "Users"), wantErr: "authenticating to "},
		{name: "template domain_name is the user's, OS_PROJECT_DOMAIN_ID the project's",
			env: alice("OS_PROJECT_DOMAIN_ID", "projects"), kv: []any{"domain_name", "Users"}, wantUser: "alice", wantProject: "science"},
		{name: "template domain_name for user and project", env: map[string]string{"OS_AUTH_URL": url},
			kv: []any{"username", "bob", "password", "bob-pw", "tenant_name", "physics", "domain_name", "Users"}, wantUser: "bob", wantProject: "physics"},
		{name: "template options over the environment", env: alice("OS_DOMAIN_NAME", "Users", "OS_PASSWORD", "stale"),
			kv: []any{"username", "bob", "password", "bob-pw", "tenant_name", "physics"}, wantUser: "bob", wantProject: "physics"},

		{name: "clouds.yaml from Horizon, OS_PASSWORD from CI", clouds: horizonYAML,
			env: map[string]string{"OS_CLOUD": "openstack", "OS_PASSWORD": "alice-pw"}, wantUser: "alice", wantProject: "science"},
		{name: "clouds.yaml by names, OS_PASSWORD from CI", clouds: namesYAML,
			env: map[string]string{"OS_CLOUD": "openstack", "OS_PASSWORD": "alice-pw"}, wantUser: "alice", wantProject: "science"},
		{name: "clouds.yaml with secure.yaml", clouds: horizonYAML, secur: "clouds:\n  openstack:\n    auth:\n      password: alice-pw\n",
			env: map[string]string{"OS_CLOUD": "openstack"}, wantUser: "alice", wantProject: "science"},
		{name: "clouds.yaml without any password", clouds: horizonYAML,
			env: map[string]string{"OS_CLOUD": "openstack"}, wantErr: "password: required with username or user_id"},
		{name: "clouds.yaml wins over OS_* it sets", clouds: horizonYAML,
			env:      map[string]string{"OS_CLOUD": "openstack", "OS_PASSWORD": "alice-pw", "OS_USERNAME": "bob", "OS_PROJECT_NAME": "physics", "OS_USER_DOMAIN_NAME": "Default"},
			wantUser: "alice", wantProject: "science"},
		{name: "template over clouds.yaml", clouds: namesYAML, env: map[string]string{"OS_CLOUD": "openstack"},
			kv: []any{"username", "bob", "password", "bob-pw", "tenant_name", "physics", "domain_name", "Users"}, wantUser: "bob", wantProject: "physics"},

		{name: "application credential id", env: map[string]string{"OS_AUTH_URL": url, "OS_APPLICATION_CREDENTIAL_ID": "ac-alice", "OS_APPLICATION_CREDENTIAL_SECRET": "alice-ac", "OS_AUTH_TYPE": "v3applicationcredential"},
			wantUser: "alice", wantProject: "science"},
		{name: "application credential name", env: map[string]string{"OS_AUTH_URL": url, "OS_APPLICATION_CREDENTIAL_NAME": "ci", "OS_APPLICATION_CREDENTIAL_SECRET": "alice-ac", "OS_USERNAME": "alice", "OS_USER_DOMAIN_NAME": "Users"},
			wantUser: "alice", wantProject: "science"},
		{name: "application credential name, template", env: map[string]string{"OS_AUTH_URL": url},
			kv: []any{"username", "alice", "domain_id", "users", "application_credential_name", "ci", "application_credential_secret", "alice-ac"}, wantUser: "alice", wantProject: "science"},
		{name: "application credential over a stale openrc", env: alice("OS_USER_DOMAIN_NAME", "Users", "OS_PROJECT_DOMAIN_NAME", "Projects", "OS_PASSWORD", "stale",
			"OS_APPLICATION_CREDENTIAL_ID", "ac-alice", "OS_APPLICATION_CREDENTIAL_SECRET", "alice-ac"), wantUser: "alice", wantProject: "science"},
		{name: "application credential in clouds.yaml",
			clouds: "clouds:\n  ci:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: " + url + "\n      application_credential_id: ac-alice\n      application_credential_secret: alice-ac\n",
			env:    map[string]string{"OS_CLOUD": "ci"}, wantUser: "alice", wantProject: "science"},

		{name: "token, rescoped to a project in another domain", env: map[string]string{"OS_AUTH_URL": url, "OS_TOKEN": aliceToken,
			"OS_PROJECT_NAME": "science", "OS_PROJECT_DOMAIN_ID": "projects", "OS_USERNAME": "stale", "OS_USER_DOMAIN_NAME": "Users"},
			wantUser: "alice", wantProject: "science"},
		{name: "token, template", env: map[string]string{"OS_AUTH_URL": url}, kv: []any{"token", aliceToken, "tenant_id", scienceID},
			wantUser: "alice", wantProject: "science"},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, l) })
	}
}

func (tc authCase) run(t *testing.T, l *lab) {
	clearOSEnv(t)
	dir := t.TempDir()
	if tc.clouds != "" {
		t.Setenv("OS_CLIENT_CONFIG_FILE", filepath.Join(dir, "clouds.yaml"))
		writeFile(t, filepath.Join(dir, "clouds.yaml"), tc.clouds)
	}
	if tc.secur != "" {
		writeFile(t, filepath.Join(dir, "secure.yaml"), tc.secur)
	}
	for k, v := range tc.env {
		t.Setenv(k, v)
	}
	raw := with(l.raw(), "identity_endpoint", nil, "username", nil, "password", nil, "tenant_name", nil, "domain_name", nil)
	var c Config
	_, err := c.Prepare(with(raw, tc.kv...))
	if err == nil {
		state, _ := newState(t, &c)
		runSteps(t, bg, state, &StepAuthenticate{})
		err = stateErr(state)
		if err == nil {
			user, project := tokenOwner(t, state.Get("clients").(*clients).provider)
			if user != tc.wantUser || project != tc.wantProject {
				t.Errorf("token for %s in %s, want %s in %s", user, project, tc.wantUser, tc.wantProject)
			}
		}
	}
	if tc.wantErr == "" && err != nil {
		t.Errorf("err %v", err)
	}
	if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
		t.Errorf("err %v, want %q", err, tc.wantErr)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// tokenOwner is the user and project name of a provider's token.
func tokenOwner(t *testing.T, p *gophercloud.ProviderClient) (user, project string) {
	t.Helper()
	idc, err := openstack.NewIdentityV3(p, gophercloud.EndpointOpts{})
	if err != nil {
		t.Fatal(err)
	}
	r := tokens.Get(bg, idc, p.Token())
	u, err := r.ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	pr, err := r.ExtractProject()
	if err != nil {
		t.Fatal(err)
	}
	return u.Name, pr.Name
}

func tokenFor(t *testing.T, url string, o gophercloud.AuthOptions) string {
	t.Helper()
	o.IdentityEndpoint = url
	p, err := openstack.AuthenticatedClient(bg, o)
	if err != nil {
		t.Fatal(err)
	}
	return p.Token()
}

func projectIDOf(t *testing.T, l *lab, user, pw, userDomain, project, projectDomain string) string {
	t.Helper()
	p, err := openstack.AuthenticatedClient(bg, gophercloud.AuthOptions{IdentityEndpoint: l.c.AuthURL(), Username: user, Password: pw,
		DomainName: userDomain, Scope: &gophercloud.AuthScope{ProjectName: project, DomainID: projectDomain}})
	if err != nil {
		t.Fatal(err)
	}
	idc, err := openstack.NewIdentityV3(p, gophercloud.EndpointOpts{})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := tokens.Get(bg, idc, p.Token()).ExtractProject()
	if err != nil {
		t.Fatal(err)
	}
	return pr.ID
}
