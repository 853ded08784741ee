package fatimage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

// TestPlanFromApplianceSELinux: with the site's appliance the image's
// SELinux is the site's selinux_state and selinux_policy for a build host
// in its selinux group (bootstrap.yml's play), and left unchanged for a
// host outside it, whatever the plugin's own default; a value the
// module would refuse fails the plan naming the variable.
func TestPlanFromApplianceSELinux(t *testing.T) {
	str := func(v string) appliance.Value { return appliance.Value{Defined: true, Value: v} }
	for _, tc := range []struct {
		name          string
		inGroup       bool
		state, policy appliance.Value
		want          selinuxMode
		wantErr       string
	}{
		{name: "outside selinux", state: str("enforcing"), policy: str("targeted"), want: selinuxMode{state: "unchanged"}},
		{name: "common default", inGroup: true, state: str("disabled"), policy: str("targeted"), want: selinuxMode{state: "disabled", policy: "targeted", fromSite: true}},
		{name: "site enforcing", inGroup: true, state: str("enforcing"), policy: str("targeted"), want: selinuxMode{state: "enforcing", policy: "targeted", fromSite: true}},
		{name: "site permissive mls", inGroup: true, state: str("permissive"), policy: str("mls"), want: selinuxMode{state: "permissive", policy: "mls", fromSite: true}},
		{name: "disabled without policy", inGroup: true, state: str("disabled"), want: selinuxMode{state: "disabled", fromSite: true}},
		{name: "enforcing without policy", inGroup: true, state: str("enforcing"), wantErr: "selinux_policy: not defined"},
		{name: "no state", inGroup: true, policy: str("targeted"), wantErr: "selinux_state: not defined"},
		{name: "bad state", inGroup: true, state: str("on"), policy: str("targeted"), wantErr: `selinux_state: "on" is not one of enforcing, permissive, disabled`},
		{name: "bad policy", inGroup: true, state: str("enforcing"), policy: str("../x"), wantErr: `selinux_policy: "../x" is not a policy name`},
		{name: "vault state", inGroup: true, state: appliance.Value{Defined: true, Error: "vault"}, wantErr: "selinux_state: the site's Ansible could not template it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := siteConfig(t)
			res := overridesResult()
			holdAll(res, true)
			if tc.inGroup {
				res.Groups = append(res.Groups, selinuxGroup)
			}
			res.Values[""][selinuxStateVar], res.Values[""][selinuxPolicyVar] = tc.state, tc.policy
			p, err := c.plan(newApplianceValues(res, ""), "")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), "the site's appliance: "+tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.selinux != tc.want {
				t.Errorf("selinux %+v, want %+v", p.selinux, tc.want)
			}
			if c.SELinux != "" {
				t.Errorf("the config's selinux became %q: the site's value lives in the plan", c.SELinux)
			}
			rec := p.applianceRecord().FromAppliance
			has := slices.ContainsFunc(rec, func(v imageApplianceValue) bool {
				return v.Variable == selinuxStateVar && slices.Equal(v.Values, []string{tc.want.state})
			})
			if has != tc.want.fromSite {
				t.Errorf("image.json from_appliance has selinux_state: %v, want %v (%+v)", has, tc.want.fromSite, rec)
			}
		})
	}
	if !slices.ContainsFunc(applianceRequest().Queries, func(q appliance.Query) bool {
		return q.Role == "" && slices.Contains(q.Vars, selinuxStateVar) && slices.Contains(q.Vars, selinuxPolicyVar)
	}) {
		t.Error("the resolution does not ask for selinux_state and selinux_policy (the play's own scope)")
	}
}

// TestSELinuxOption: without the site's appliance the option decides
// (default disabled); with appliance_environment it is left unset and an
// explicit one is refused at validate, naming the field and the site's
// variable that decides instead.
func TestSELinuxOption(t *testing.T) {
	clearArkEnv(t)
	for raw, want := range map[string]string{"": "disabled", "enforcing": "enforcing", "permissive": "permissive", "unchanged": "unchanged"} {
		cfg := map[string]any{"repos": []any{goodRepo()}}
		if raw != "" {
			cfg["selinux"] = raw
		}
		var p Provisioner
		if err := p.Prepare(cfg); err != nil {
			t.Fatal(err)
		}
		if p.plan.selinux != (selinuxMode{state: want}) {
			t.Errorf("selinux %q: plan %+v, want state %s", raw, p.plan.selinux, want)
		}
	}
	err := (&Provisioner{}).Prepare(map[string]any{"repos": []any{goodRepo()}, "selinux": "Enforcing"})
	if err == nil || !strings.Contains(err.Error(), `selinux: "Enforcing" is not one of enforcing, permissive, disabled, unchanged`) {
		t.Errorf("selinux \"Enforcing\": %v", err)
	}
	repo, env := fakeCheckout(t)
	var p Provisioner
	if err := p.Prepare(map[string]any{"appliance_dir": repo, "appliance_environment": env, "repos": []any{goodRepo()}}); err != nil {
		t.Fatal(err)
	}
	if p.config.SELinux != "" || p.plan.selinux.state != "unchanged" {
		t.Errorf("with appliance_environment: option %q, Prepare's plan %+v; want no default and nothing decided before the site's Ansible", p.config.SELinux, p.plan.selinux)
	}
	for _, v := range []string{"disabled", "unchanged"} {
		err := (&Provisioner{}).Prepare(map[string]any{"appliance_dir": repo, "appliance_environment": env, "repos": []any{goodRepo()}, "selinux": v})
		if err == nil || !strings.Contains(err.Error(), "selinux: not with appliance_environment, whose own selinux_state") {
			t.Errorf("selinux %q with appliance_environment: %v", v, err)
		}
	}
}

// TestSELinuxScript runs selinux.sh's selinux_set on a config file as
// Rocky's image has it: every state of the module, the policy switched
// only to an installed one, a reboot only when the file changed.
func TestSELinuxScript(t *testing.T) {
	const rocky = "# This file controls the state of SELinux on the system.\nSELINUX=enforcing\nSELINUXTYPE=targeted\n"
	for _, tc := range []struct {
		name, config, state, policy string
		installed                   []string
		want                        string // the config after; "" unchanged
		out, wantErr                string
		reboot                      bool
	}{
		{name: "enforcing already", config: rocky, state: "enforcing", policy: "targeted", out: "SELinux already enforcing"},
		{name: "disabled", config: rocky, state: "disabled", policy: "targeted", want: strings.Replace(rocky, "=enforcing", "=disabled", 1), out: "SELinux enforcing -> disabled", reboot: true},
		{name: "enforcing from disabled", config: strings.Replace(rocky, "=enforcing", "=disabled", 1), state: "enforcing", policy: "targeted",
			want: rocky, out: "SELinux disabled -> enforcing", reboot: true},
		{name: "permissive, no policy", config: rocky, state: "permissive", want: strings.Replace(rocky, "=enforcing", "=permissive", 1), out: "SELinux enforcing -> permissive", reboot: true},
		{name: "mls installed", config: rocky, state: "enforcing", policy: "mls", installed: []string{"targeted", "mls"},
			want: strings.Replace(rocky, "=targeted", "=mls", 1), out: "SELinux policy targeted -> mls", reboot: true},
		{name: "mls not installed", config: rocky, state: "enforcing", policy: "mls", installed: []string{"targeted"},
			wantErr: "!fatimage: selinux: policy mls is not installed"},
		{name: "no SELINUX line", config: "SELINUXTYPE=targeted\n", state: "enforcing", want: "SELINUXTYPE=targeted\nSELINUX=enforcing\n", out: "SELinux  -> enforcing", reboot: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "config")
			if err := os.WriteFile(conf, []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, pol := range tc.installed {
				if err := os.MkdirAll(filepath.Join(dir, pol, "policy"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// nothing to fake: the function edits DIR/config with the
			// shell's own tools, and calls nothing else
			out, calls, err := runFaked(t, newScript("selinux").call("selinux_set", dir, tc.state, tc.policy), nil)
			wantCalls(t, calls, nil)
			got, _ := os.ReadFile(conf)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(out, tc.wantErr) || string(got) != tc.config {
					t.Fatalf("err %v, output %q, config %q: want %q and the config untouched", err, out, got, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			want := tc.want
			if want == "" {
				want = tc.config
			}
			if string(got) != want {
				t.Errorf("config:\n%s\nwant:\n%s", got, want)
			}
			if !strings.Contains(out, tc.out) || strings.Contains(out, "REBOOT-NEEDED") != tc.reboot {
				t.Errorf("output %q: want %q, reboot %v", out, tc.out, tc.reboot)
			}
		})
	}
	out, _, err := runFaked(t, newScript("selinux").call("selinux_set", t.TempDir(), "disabled", ""), nil)
	if err != nil || !strings.Contains(out, "nothing to do") || strings.Contains(out, "REBOOT-NEEDED") {
		t.Errorf("no config: %v, %q", err, out)
	}
}
