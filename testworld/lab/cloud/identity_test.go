package cloud

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// twoDomainLab has alice in domain Users with her project in domain
// Projects, as sites that keep people and projects apart do.
func twoDomainLab(t *testing.T) *lab {
	return newLab(t, func(o *Options) {
		o.Users = append(o.Users, User{Name: "alice", Password: "alice-pw", Domain: "Users",
			Project: "science", ProjectDomain: "Projects",
			AppCredentials: []AppCredential{{ID: "ac-alice", Name: "ci", Secret: "alice-ac"}}})
	})
}

func TestAuthTwoDomains(t *testing.T) {
	l := twoDomainLab(t)
	ok := []gophercloud.AuthOptions{
		{Username: "alice", Password: "alice-pw", DomainName: "Users",
			Scope: &gophercloud.AuthScope{ProjectName: "science", DomainID: "projects"}},
		{Username: "alice", Password: "alice-pw", DomainID: "users",
			Scope: &gophercloud.AuthScope{ProjectName: "science", DomainName: "Projects"}},
		// An application credential by name is found in its user's domain.
		{ApplicationCredentialName: "ci", ApplicationCredentialSecret: "alice-ac", Username: "alice", DomainName: "Users"},
		{ApplicationCredentialID: "ac-alice", ApplicationCredentialSecret: "alice-ac"},
	}
	for _, o := range ok {
		p := l.provider(o)
		idc, err := openstack.NewIdentityV3(p, gophercloud.EndpointOpts{})
		if err != nil {
			t.Fatal(err)
		}
		r := tokens.Get(ctx, idc, p.Token())
		proj, err := r.ExtractProject()
		if err != nil || proj.Name != "science" || proj.Domain.ID != "projects" || proj.Domain.Name != "Projects" {
			t.Errorf("%+v: project %+v %v", o, proj, err)
		}
		u, err := r.ExtractUser()
		if err != nil || u.Domain.ID != "users" {
			t.Errorf("%+v: user %+v %v", o, u, err)
		}
	}
	for _, o := range []gophercloud.AuthOptions{
		// The project scoped in the user's domain: not there.
		{Username: "alice", Password: "alice-pw", DomainName: "Users", TenantName: "science"},
		// The user looked up in the project's domain: not there.
		{Username: "alice", Password: "alice-pw", DomainName: "Projects", TenantName: "science"},
		{ApplicationCredentialName: "ci", ApplicationCredentialSecret: "alice-ac", Username: "alice", DomainName: "Default"},
	} {
		o.IdentityEndpoint = l.c.AuthURL()
		if _, err := openstack.AuthenticatedClient(ctx, o); !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
			t.Errorf("%+v: want 401, got %v", o, err)
		}
	}
}

// Requests gophercloud never sends get Keystone's own answers.
func TestAuthMalformed(t *testing.T) {
	l := twoDomainLab(t)
	for _, tc := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"user name without domain",
			`{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"alice","password":"alice-pw"}}}}}`,
			400, "Expecting to find domain in user."},
		{"project name without domain",
			`{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"alice","password":"alice-pw","domain":{"id":"users"}}}},"scope":{"project":{"name":"science"}}}}`,
			400, "Expecting to find domain in project."},
		{"application credential with a scope",
			`{"auth":{"identity":{"methods":["application_credential"],"application_credential":{"id":"ac-alice","secret":"alice-ac"}},"scope":{"project":{"name":"science","domain":{"id":"projects"}}}}}`,
			401, "Application credentials cannot request a scope."},
		{"application credential name without user domain",
			`{"auth":{"identity":{"methods":["application_credential"],"application_credential":{"name":"ci","secret":"alice-ac","user":{"name":"alice"}}}}}`,
			400, "Expecting to find domain in user."},
		{"domain name wins over a wrong id",
			`{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"alice","password":"alice-pw","domain":{"id":"default","name":"Users"}}}},"scope":{"project":{"id":"` + l.c.identity.projectID("science") + `"}}}}`,
			201, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(l.c.AuthURL()+"/auth/tokens", "application/json", bytes.NewBufferString(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.msg == "" {
				return
			}
			var e struct{ Error struct{ Message string } }
			if err := json.Unmarshal(b, &e); err != nil || !strings.HasPrefix(e.Error.Message, tc.msg) {
				t.Errorf("message %q (%v), want prefix %q", e.Error.Message, err, tc.msg)
			}
		})
	}
}
