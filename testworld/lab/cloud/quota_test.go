package cloud

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

// The bodies below are what Debian's Nova and Neutron answered to the
// same requests (the real-cloud tier, checked with curl).

// TestQuotaPolicy: a member reads its own project's quotas and nothing
// else; only an admin sets or resets them.
func TestQuotaPolicy(t *testing.T) {
	l := policyLab(t)
	member := l.provider(l.pwOpts()).Token()
	pid := projectOf(t, l)
	other := l.c.ProjectID("other")
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/compute/v2.1/os-quota-sets/" + pid, "", 200, `"instances":10`},
		{"GET", "/compute/v2.1/os-quota-sets/" + pid + "/defaults", "", 200, `"ram":51200`},
		{"GET", "/compute/v2.1/os-quota-sets/" + other, "", 403, "Policy doesn't allow os_compute_api:os-quota-sets:show to be performed."},
		{"PUT", "/compute/v2.1/os-quota-sets/" + pid, `{"quota_set":{"instances":0}}`, 403, "os_compute_api:os-quota-sets:update"},
		{"DELETE", "/compute/v2.1/os-quota-sets/" + pid, "", 403, "os_compute_api:os-quota-sets:delete"},
		{"GET", "/networking/v2.0/quotas/" + pid, "", 200, `"floatingip":50`},
		{"GET", "/networking/v2.0/quotas/" + other, "", 403, `"PolicyNotAuthorized"`},
		{"PUT", "/networking/v2.0/quotas/" + pid, `{"quota":{"floatingip":0}}`, 403, "rule:update_quota is disallowed by policy"},
		{"DELETE", "/networking/v2.0/quotas/" + pid, "", 403, "rule:delete_quota is disallowed by policy"},
	} {
		if st, body := call(t, l, member, c.method, c.path, c.body); st != c.status || !strings.Contains(body, c.want) {
			t.Errorf("member %s %s: %d %s, want %d with %s", c.method, c.path, st, body, c.status, c.want)
		}
	}
}

// TestQuotaEnforced: quotas an admin lowers refuse the next server or
// floating IP with the services' own answers, and DELETE restores the
// defaults.
func TestQuotaEnforced(t *testing.T) {
	l := policyLab(t)
	admin := l.provider(gophercloud.AuthOptions{Username: "admin", Password: "admin-pw", DomainName: "Default", TenantName: "admin"}).Token()
	member := l.provider(l.pwOpts()).Token()
	pid := projectOf(t, l)
	nova, neutron := "/compute/v2.1/os-quota-sets/"+pid, "/networking/v2.0/quotas/"+pid
	must := func(tok, method, path, body string, status int, want string) {
		t.Helper()
		if st, got := call(t, l, tok, method, path, body); st != status || !strings.Contains(got, want) {
			t.Fatalf("%s %s %s: %d %s, want %d with %s", method, path, body, st, got, status, want)
		}
	}
	server := `{"server":{"name":"q","flavorRef":"` + testFlavor + `","imageRef":"` + l.imageID + `","networks":"auto"}}`
	fip := `{"floatingip":{"floating_network_id":"` + l.c.network.publicNet.ID + `"}}`

	must(admin, "PUT", nova, `{"quota_set":{"instances":0}}`, 200, `"instances":0`)
	must(member, "POST", "/compute/v2.1/servers", server, 403,
		`{"forbidden":{"code":403,"message":"Quota exceeded for instances: Requested 1, but already used 0 of 0 instances"}}`)
	must(admin, "PUT", nova, `{"quota_set":{"instances":0,"cores":0,"ram":0}}`, 200, `"ram":0`)
	must(member, "POST", "/compute/v2.1/servers", server, 403,
		"Quota exceeded for cores, instances, ram: Requested 1, 1, 2048, but already used 0, 0, 0 of 0, 0, 0 cores, instances, ram")
	must(admin, "DELETE", nova, "", 202, "")
	must(admin, "DELETE", nova, "", 202, "") // Nova's reset is idempotent
	must(member, "GET", nova, "", 200, `"instances":10`)

	cl := l.clients()
	s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "q", ImageRef: l.imageID, FlavorRef: testFlavor, Networks: "auto"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	must(admin, "PUT", nova, `{"quota_set":{"instances":0}}`, 400,
		"Quota limit 0 for instances must be greater than or equal to already used and reserved 1.")
	must(admin, "PUT", nova, `{"quota_set":{"cores":1}}`, 200, `"cores":1`)
	must(member, "POST", "/compute/v2.1/servers", server, 403,
		"Quota exceeded for cores: Requested 1, but already used 1 of 1 cores")
	must(member, "GET", "/compute/v2.1/limits", "", 200, `"maxTotalCores":1`)
	must(admin, "PUT", nova, `{"quota_set":{"instances":-2}}`, 400, "-2 is less than the minimum of -1")
	must(admin, "PUT", nova, `{"quota_set":{"bogus":1}}`, 400, "Additional properties are not allowed ('bogus' was unexpected)")
	must(admin, "DELETE", nova, "", 202, "")
	if err := servers.Delete(ctx, cl.compute, s.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}

	must(admin, "PUT", neutron, `{"quota":{"floatingip":0}}`, 200, `"floatingip":0`)
	must(member, "POST", "/networking/v2.0/floatingips", fip, 409,
		`{"NeutronError":{"detail":"","message":"Quota exceeded for resources: ['floatingip'].","type":"OverQuota"}}`)
	must(admin, "PUT", neutron, `{"quota":{"bogus":1}}`, 400, "Unrecognized attribute(s) 'bogus'")
	must(admin, "PUT", neutron, `{"quota":{"floatingip":-2}}`, 400, "Invalid input for floatingip. Reason: '-2' is too small - must be at least '-1'.")
	must(admin, "DELETE", neutron, "", 204, "")
	must(admin, "DELETE", neutron, "", 404, "Quota for tenant "+pid+" could not be found.")
	st, body := call(t, l, member, "POST", "/networking/v2.0/floatingips", fip)
	if st != http.StatusCreated {
		t.Fatalf("a floating IP after the reset: %d %s", st, body)
	}
	id := body[strings.Index(body, `"id":"`)+6:]
	must(member, "DELETE", "/networking/v2.0/floatingips/"+id[:strings.Index(id, `"`)], "", 204, "")
	l.assertClean()
}
