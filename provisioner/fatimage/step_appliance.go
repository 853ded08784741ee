package fatimage

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"strconv"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// stepAppliance, first in a run, resolves every appliance variable the
// built-in groups name, once, with the site's own Ansible against the
// build VM, and makes the run's plan from the values (the plan Prepare
// made from the built-in values served validation). Without a site it
// says the built-in values are used.
func stepAppliance(ctx context.Context, s *state) error {
	if s.plan.site == nil {
		if len(s.plan.sets.groups) > 0 {
			s.say("WARNING: " + fallbackWarning)
		}
		return nil
	}
	t, err := applianceTarget(s.generated)
	if err != nil {
		return err
	}
	s.say(fmt.Sprintf("appliance: reading %s, environment %s, on the build VM (%s:%d)", s.plan.site.Repo, s.plan.site.Environment, t.Host, t.Port))
	// Ansible's output (no value is in it: the engine's reads are
	// no_log) goes to Packer's log; a failure carries its tail.
	// One resolution serves the values and what fatimage.yml runs for
	// the build host (step_appliance_steps.go).
	req, all, err := ApplianceRequest(s.plan.site)
	if err != nil {
		return err
	}
	res, err := s.plan.site.Resolve(ctx, t, req, log.Writer())
	if err != nil {
		return err
	}
	s.applianceRes, s.applianceAll, s.applianceTarget = res, all, t
	// the proxy role prints its settings when it runs through Ansible
	proxy := proxySettings(res)
	proxy.redactSecrets()
	if res.CommitError != "" {
		s.say("WARNING: appliance: " + res.CommitError)
	}
	av := newApplianceValues(res, t.Host)
	if av.proxy, err = proxy.forBuild(res, all); err != nil {
		return err
	}
	if av.native, err = nativeGroupsRun(all, builtinsOf(res.Groups), resultRuns(res)); err != nil {
		return err
	}
	groups := appendUnique(appendUnique(slices.Clone(s.cfg.Groups), builtinsOf(res.Groups)...), av.native...)
	if av.repoFiles, err = s.fetchVendorRepoFiles(ctx, av, groups); err != nil {
		return err
	}
	p, err := s.replan(av, "")
	if err != nil {
		return fmt.Errorf("the plan from the site's appliance (commit %s, environment %s): %w", res.Commit, res.Environment, err)
	}
	s.plan = p
	s.say(fmt.Sprintf("%s; %d values from it; groups %s", res.Summary(), len(p.sets.applied), strings.Join(p.setNames, ", ")))
	if w := oodAppsNotInstalled(res, p); w != "" {
		s.say(w)
	}
	if px := p.proxy(); px != nil {
		s.say(fmt.Sprintf("appliance: the build host is in the proxy group: every download of the build goes through %s (proxy_http_proxy), dnf's too: %v (proxy_dnf)", px.shown(), px.dnf))
	}
	return nil
}

// ApplianceRequest is the one resolution the step asks of site's
// Ansible: the built-in groups' variables and conditions, and what
// fatimage.yml runs for the build host (its steps are returned too).
// Exported for the benchmark, which resolves it as a build does.
func ApplianceRequest(site *appliance.Site) (appliance.Request, []appliance.Step, error) {
	req := applianceRequest()
	all, err := site.Steps()
	if err != nil {
		return req, nil, fmt.Errorf("appliance: %w", err)
	}
	req.AddSteps(all)
	return req, all, nil
}

// applianceTarget is the build VM as Packer's communicator reaches it:
// the generated data Packer gives every provisioner.
func applianceTarget(gen map[string]any) (appliance.Target, error) {
	str := func(k string) string { v, _ := gen[k].(string); return v }
	t := appliance.Target{Host: str("Host"), User: str("User"), PrivateKey: []byte(str("SSHPrivateKey")),
		PrivateKeyFile: str("SSHPrivateKeyFile")}
	switch p := gen["Port"].(type) {
	case int:
		t.Port = p
	case int64:
		t.Port = int(p)
	case float64:
		t.Port = int(p)
	case string:
		t.Port, _ = strconv.Atoi(p)
	}
	if c, _ := gen["ConnType"].(string); c != "" && c != "ssh" {
		return t, fmt.Errorf("appliance_environment: the site's Ansible reaches the build VM over SSH; the communicator is %s", c)
	}
	if t.Host == "" || t.User == "" || (len(t.PrivateKey) == 0 && t.PrivateKeyFile == "") {
		return t, errors.New("appliance_environment: Packer gave no SSH host, user and private key for the build VM (the site's Ansible connects as the appliance's build does, with the communicator's key)")
	}
	return t, nil
}

// nativeGroupsRun are the built-in groups, beyond those of the host's
// groups (have), that do natively a step fatimage.yml runs for the build
// host (runs says which): without them the step would run through
// Ansible, after the plugin's own repositories and packages, which the
// plugin does better. The build asks the site's Ansible (resultRuns);
// appliance_strict asks the files (validateApplianceStrict), so that
// both agree on what runs natively.
func nativeGroupsRun(all []appliance.Step, have []string, runs func(appliance.Step) (bool, error)) ([]string, error) {
	var out []string
	for _, st := range all {
		if st.Hook != "" {
			continue
		}
		row, ok := packagesets.NativeFor(st.Keys())
		if !ok || row.None != "" || len(row.Steps) > 0 || len(row.Groups) == 0 ||
			slices.ContainsFunc(row.Groups, func(g string) bool { return slices.Contains(have, g) || slices.Contains(out, g) }) {
			continue
		}
		r, err := runs(st)
		if err != nil {
			return nil, err
		}
		if r {
			out = append(out, row.Groups[0])
		}
	}
	return out, nil
}

// resultRuns is whether the build host runs a step, as the site's
// Ansible resolved it (res).
func resultRuns(res *appliance.Result) func(appliance.Step) (bool, error) {
	return func(st appliance.Step) (bool, error) {
		runs, _, err := res.Runs(st)
		return runs, err
	}
}
