package lab_test

import (
	"context"
	"encoding/json"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/pulp"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
)

// TestSitePulpAndArkControl: .lab/env names a working site Pulp API, and
// the "ark" control puts and removes the host rule that keeps VMs off the
// Ark double.
func TestSitePulpAndArkControl(t *testing.T) {
	labtest.Require(t)
	env := theLab.Env
	if env["LAB_SITE_PULP_URL"] != theLab.SitePulp.URL() || env["LAB_SITE_PULP_USERNAME"] != lab.SitePulpUser || env["LAB_SITE_PULP_PASSWORD"] == "" {
		t.Fatalf("site Pulp variables: %q %q", env["LAB_SITE_PULP_URL"], env["LAB_SITE_PULP_USERNAME"])
	}
	api, err := pulp.NewAPI(env["LAB_SITE_PULP_URL"], pulp.ClientOptions{Username: env["LAB_SITE_PULP_USERNAME"], Password: env["LAB_SITE_PULP_PASSWORD"]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.Status(context.Background()); err != nil {
		t.Fatalf("site Pulp status: %v", err)
	}

	arkPort := theLab.Pulp.URL()[strings.LastIndex(theLab.Pulp.URL(), ":")+1:]
	ruleInPlace := func() bool {
		out, err := exec.Command("iptables", "-w", "5", "-S", "INPUT").CombinedOutput()
		if err != nil {
			t.Fatalf("iptables -S: %v: %s", err, out)
		}
		return strings.Contains(string(out), "--dport "+arkPort+" -j REJECT")
	}
	put := func(ok bool) bool {
		body := `{"reachable_from_vms": false}`
		if ok {
			body = `{"reachable_from_vms": true}`
		}
		req, _ := http.NewRequest(http.MethodPut, env["LAB_CONTROL_URL"]+"/ark", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			ReachableFromVMs bool `json:"reachable_from_vms"`
		}
		if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&got) != nil {
			t.Fatalf("PUT /ark: %s", resp.Status)
		}
		return got.ReachableFromVMs
	}
	t.Cleanup(func() {
		if err := theLab.SetArkReachableFromVMs(true); err != nil {
			t.Error(err)
		}
	})
	if put(false) || theLab.ArkReachableFromVMs() || !ruleInPlace() {
		t.Fatal("Ark still reachable from VMs after PUT false")
	}
	if !put(true) || !theLab.ArkReachableFromVMs() || ruleInPlace() {
		t.Fatal("Ark still blocked after PUT true")
	}
}
