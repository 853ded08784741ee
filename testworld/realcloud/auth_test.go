//go:build realcloud

package realcloud

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// authCase is one way a site authenticates: what it puts in the
// environment (and clouds.yaml, secure.yaml next to it).
type authCase struct {
	name          string
	env           []string
	clouds, secur string
	wantAuthFail  bool
}

// TestAuthenticationMatrix authenticates every way real sites do against
// real Keystone, with the user in one domain and its project in another:
// each build must get past Keystone and find Nova (it then stops at a
// flavor that does not exist, before creating anything). The user has a
// role on that project only, so a token scoped anywhere else is refused.
func TestAuthenticationMatrix(t *testing.T) {
	tr := tier(t)
	ctx := context.Background()
	pw, err := tr.Secret("auth")
	if err != nil {
		t.Fatal(err)
	}
	url := AuthURL(tr.Ports)
	idc := client(t, tr, true, openstack.NewIdentityV3)
	userDom, projDom := domainID(t, idc, AuthUserDomain), domainID(t, idc, AuthProjectDomain)
	projID := projectID(t, idc, AuthProject, projDom)
	alice, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: url, Username: AuthUser, Password: pw,
		DomainName: AuthUserDomain, Scope: &gophercloud.AuthScope{ProjectID: projID}})
	if err != nil {
		t.Fatalf("the tier has no %s in %s with a role on %s: %v", AuthUser, AuthUserDomain, AuthProject, err)
	}
	aid, err := openstack.NewIdentityV3(alice, EndpointOpts)
	if err != nil {
		t.Fatal(err)
	}
	user, err := tokens.Get(ctx, aid, alice.Token()).ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	ac, err := applicationcredentials.Create(ctx, aid, user.ID, applicationcredentials.CreateOpts{Name: uniqueName("rc-auth")}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { applicationcredentials.Delete(ctx, aid, user.ID, ac.ID) })

	openrc := func(kv ...string) []string {
		return append([]string{"OS_AUTH_URL=" + url, "OS_USERNAME=" + AuthUser, "OS_PASSWORD=" + pw, "OS_PROJECT_NAME=" + AuthProject}, kv...)
	}
	horizonYAML := "clouds:\n  openstack:\n    auth:\n      auth_url: " + url + "\n      username: " + AuthUser +
		"\n      project_id: " + projID + "\n      project_name: " + AuthProject + "\n      user_domain_name: " + AuthUserDomain +
		"\n      project_domain_id: " + projDom + "\n    region_name: " + Region + "\n    interface: public\n    identity_api_version: 3\n"
	for _, tc := range []authCase{
		{name: "Horizon openrc v3", env: openrc("OS_PROJECT_ID="+projID, "OS_USER_DOMAIN_NAME="+AuthUserDomain, "OS_PROJECT_DOMAIN_ID="+projDom,
			"OS_REGION_NAME="+Region, "OS_INTERFACE=public", "OS_IDENTITY_API_VERSION=3")},
		{name: "openrc domain names", env: openrc("OS_USER_DOMAIN_NAME="+AuthUserDomain, "OS_PROJECT_DOMAIN_NAME="+AuthProjectDomain)},
		{name: "openrc domain ids", env: openrc("OS_USER_DOMAIN_ID="+userDom, "OS_PROJECT_DOMAIN_ID="+projDom)},
		{name: "openrc user domain id, project domain name", env: openrc("OS_USER_DOMAIN_ID="+userDom, "OS_PROJECT_DOMAIN_NAME="+AuthProjectDomain)},
		{name: "openrc one domain where there are two", env: openrc("OS_DOMAIN_NAME=" + AuthUserDomain), wantAuthFail: true},
		{name: "clouds.yaml from Horizon, OS_PASSWORD from CI", clouds: horizonYAML, env: []string{"OS_CLOUD=openstack", "OS_PASSWORD=" + pw}},
		{name: "clouds.yaml with secure.yaml", clouds: horizonYAML, secur: "clouds:\n  openstack:\n    auth:\n      password: " + pw + "\n",
			env: []string{"OS_CLOUD=openstack"}},
		{name: "application credential id", env: []string{"OS_AUTH_URL=" + url, "OS_APPLICATION_CREDENTIAL_ID=" + ac.ID, "OS_APPLICATION_CREDENTIAL_SECRET=" + ac.Secret}},
		{name: "application credential name", env: []string{"OS_AUTH_URL=" + url, "OS_APPLICATION_CREDENTIAL_NAME=" + ac.Name,
			"OS_APPLICATION_CREDENTIAL_SECRET=" + ac.Secret, "OS_USERNAME=" + AuthUser, "OS_USER_DOMAIN_NAME=" + AuthUserDomain}},
		{name: "token", env: []string{"OS_AUTH_URL=" + url, "OS_TOKEN=" + alice.Token(), "OS_PROJECT_NAME=" + AuthProject, "OS_PROJECT_DOMAIN_ID=" + projDom}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, tr) })
	}
}

// authTemplate names no credentials: they come from the environment.
const authTemplate = `
source "fatimage-openstack" "auth" {
  source_image_name = "` + BaseImageName + `"
  flavor            = "no-such-flavor"
  image_name        = "unused"
  communicator      = "none"
}

build {
  sources = ["source.fatimage-openstack.auth"]
}
`

func (tc authCase) run(t *testing.T, tr *Tier) {
	dir := t.TempDir()
	// The tier's own credentials are blanked: only the case's count.
	env := []string{"OS_CLOUD=", "OS_CLIENT_CONFIG_FILE=" + filepath.Join(dir, "clouds.yaml")}
	for _, k := range []string{"AUTH_URL", "USERNAME", "USER_ID", "PASSWORD", "PROJECT_ID", "PROJECT_NAME", "TENANT_ID", "TENANT_NAME",
		"USER_DOMAIN_NAME", "USER_DOMAIN_ID", "PROJECT_DOMAIN_NAME", "PROJECT_DOMAIN_ID", "DOMAIN_NAME", "DOMAIN_ID", "TOKEN"} {
		env = append(env, "OS_"+k+"=")
	}
	for name, body := range map[string]string{"clouds.yaml": tc.clouds, "secure.yaml": tc.secur} {
		if body == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := build(t, tr, authTemplate, append(env, tc.env...)...)
	out := r.Output()
	authFailed := strings.Contains(out, "authenticating to ")
	if authFailed != tc.wantAuthFail {
		t.Errorf("authentication failed: %v, want %v:\n%s", authFailed, tc.wantAuthFail, out)
	}
	if tc.wantAuthFail {
		mustContain(t, out, "got 401") // Keystone's refusal, not ours
	} else {
		mustContain(t, out, `flavor: no flavor has ID or name "no-such-flavor"`)
	}
}

func domainID(t *testing.T, c *gophercloud.ServiceClient, name string) string {
	t.Helper()
	pages, err := domains.List(c, domains.ListOpts{Name: name}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := domains.ExtractDomains(pages)
	if err != nil || len(all) != 1 {
		t.Fatalf("domain %s: %v %v", name, all, err)
	}
	return all[0].ID
}

func projectID(t *testing.T, c *gophercloud.ServiceClient, name, domain string) string {
	t.Helper()
	pages, err := projects.List(c, projects.ListOpts{Name: name, DomainID: domain}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := projects.ExtractProjects(pages)
	if err != nil || len(all) != 1 {
		t.Fatalf("project %s: %v %v", name, all, err)
	}
	return all[0].ID
}
