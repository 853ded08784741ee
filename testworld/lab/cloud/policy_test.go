package cloud

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// policyLab has the default member user "lab" (also a member of project
// "share"), a user "other" in project "other" and an admin.
func policyLab(t *testing.T) *lab {
	return newLab(t, func(o *Options) {
		o.Users[0].OtherProjects = []string{"share"}
		o.Users = append(o.Users, User{Name: "other", Password: "pw2", Project: "other"},
			User{Name: "admin", Password: "admin-pw", Project: "admin", Roles: []string{"admin"}})
	})
}

// call makes a raw request with tok and returns status and body.
func call(t *testing.T, l *lab, tok, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, l.c.URL()+path, strings.NewReader(body))
	req.Header.Set("X-Auth-Token", tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMemberTokens: the default user is a project member, not an admin,
// and admin-only operations answer 403 the way the services' default
// policies do. On the old lab every token carried admin and all of these
// succeeded.
func TestMemberTokens(t *testing.T) {
	l := policyLab(t)
	member := l.provider(l.pwOpts())
	admin := l.provider(gophercloud.AuthOptions{Username: "admin", Password: "admin-pw", DomainName: "Default", TenantName: "admin"})

	idc, err := openstack.NewIdentityV3(member, gophercloud.EndpointOpts{})
	if err != nil {
		t.Fatal(err)
	}
	roles, err := tokens.Get(ctx, idc, member.Token()).ExtractRoles()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range roles {
		names = append(names, r.Name)
	}
	if !eqStrs(names, []string{"member", "reader"}) {
		t.Fatalf("member token roles: %v", names)
	}

	pid := projectOf(t, l)
	cases := []struct {
		name, method, path, body, want string
	}{
		{"all_tenants server list", "GET", "/compute/v2.1/servers/detail?all_tenants=1", "", "get_all_tenants"},
		{"project list", "GET", "/identity/v3/projects", "", "identity:list_projects"},
	}
	for _, c := range cases {
		if st, body := call(t, l, member.Token(), c.method, c.path, c.body); st != http.StatusForbidden || !strings.Contains(body, c.want) {
			t.Errorf("member: %s: %d %s", c.name, st, body)
		}
		if st, body := call(t, l, admin.Token(), c.method, c.path, c.body); st != http.StatusOK {
			t.Errorf("admin: %s: %d %s", c.name, st, body)
		}
	}
	// The member lists its own projects through /v3/auth/projects.
	st, body := call(t, l, member.Token(), "GET", "/identity/v3/auth/projects", "")
	if st != http.StatusOK || !strings.Contains(body, `"share"`) || strings.Contains(body, `"other"`) {
		t.Errorf("auth/projects: %d %s", st, body)
	}

	// Cinder's admin actions.
	cl := l.clients()
	v, err := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 1, Name: "policy"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitVolume(t, cl.volume, v.ID, "available")
	for _, action := range []string{`{"os-reset_status": {"status": "error"}}`, `{"os-force_delete": {}}`} {
		st, body := call(t, l, member.Token(), "POST", "/volume/v3/"+pid+"/volumes/"+v.ID+"/action", action)
		if st != http.StatusForbidden || !strings.Contains(body, "volume_admin_actions") {
			t.Errorf("member %s: %d %s", action, st, body)
		}
	}
	if got, _ := volumes.Get(ctx, cl.volume, v.ID).Extract(); got.Status != "available" {
		t.Fatalf("a refused admin action changed the volume: %s", got.Status)
	}
	volumes.Delete(ctx, cl.volume, v.ID, nil)
	waitVolumeGone(t, cl.volume, v.ID)
	l.assertClean()
}

// TestRescopeToOtherProject: a user may get a token for any project it
// has a role on (what the builder does to accept an image membership as
// the member project), and for no other.
func TestRescopeToOtherProject(t *testing.T) {
	l := policyLab(t)
	p := l.provider(l.pwOpts())
	o := gophercloud.AuthOptions{IdentityEndpoint: l.c.AuthURL(), TokenID: p.Token(),
		Scope: &gophercloud.AuthScope{ProjectName: "share", DomainName: "Default"}}
	ps, err := openstack.AuthenticatedClient(ctx, o)
	if err != nil {
		t.Fatalf("rescope to share: %v", err)
	}
	idc, _ := openstack.NewIdentityV3(ps, gophercloud.EndpointOpts{})
	proj, err := tokens.Get(ctx, idc, ps.Token()).ExtractProject()
	if err != nil || proj.Name != "share" {
		t.Fatalf("rescoped project: %+v %v", proj, err)
	}
	// an application credential's token stays in its project
	pa := l.provider(gophercloud.AuthOptions{ApplicationCredentialID: "appcred-id-1", ApplicationCredentialSecret: "s3cret"})
	if _, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: l.c.AuthURL(), TokenID: pa.Token(),
		Scope: &gophercloud.AuthScope{ProjectName: "share", DomainName: "Default"}}); !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Fatalf("re-scoping an application credential's token: %v", err)
	}
	o.Scope = &gophercloud.AuthScope{ProjectName: "other", DomainName: "Default"}
	if _, err := openstack.AuthenticatedClient(ctx, o); !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
		t.Fatalf("rescope to a project without a role: %v", err)
	}
	// a token's body lists the user's roles on its project
	var tb struct {
		Token struct {
			Roles []struct{ Name string } `json:"roles"`
		} `json:"token"`
	}
	req, _ := http.NewRequest("GET", l.c.AuthURL()+"/auth/tokens", nil)
	req.Header.Set("X-Auth-Token", ps.Token())
	req.Header.Set("X-Subject-Token", ps.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&tb); err != nil || len(tb.Token.Roles) == 0 || tb.Token.Roles[0].Name == "admin" {
		t.Fatalf("roles: %+v %v", tb, err)
	}
}
