package fatimage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// eessi: the group's packages, cvmfs_config setup after them, and
// default.local without the build VM's proxy.
func TestGroupEessi(t *testing.T) {
	repos := []map[string]string{{"name": "cernvmfs_eessi_cfg", "repo_file": "cvmfs-config-eessi", "repo_name": "cernvmfs_eessi_cfg", "baseurl": "http://lab.invalid/eessi/", "gpgcheck": "1"}}
	c := mustGroups(t, []string{"eessi"}, map[string]any{"repos": repos})
	p := c.packagePlan()
	if strings.Join(p.Install, " ") != "cvmfs cvmfs-config-default cvmfs-config-eessi" || strings.Join(p.NoGPGCheck, " ") != "cernvmfs_eessi_cfg" {
		t.Errorf("install %v, no gpg check %v", p.Install, p.NoGPGCheck)
	}
	if strings.Join(c.sets.RunAfterPackages, " ") != "eessi/cvmfs-setup.sh" {
		t.Errorf("run_after_packages %v", c.sets.RunAfterPackages)
	}
	f, ok := fileAt(c, "/etc/cvmfs/default.local")
	if !ok || f.Content != "CVMFS_CLIENT_PROFILE=single\nCVMFS_QUOTA_LIMIT=10000\n" || f.Mode != "0644" || strings.Contains(f.Content, "PROXY") {
		t.Errorf("default.local %+v", f)
	}
	// without the repository configured, nothing is switched off
	if p := mustGroups(t, []string{"eessi"}, nil).packagePlan(); len(p.NoGPGCheck) != 0 {
		t.Errorf("no gpg check for an unconfigured repository: %v", p.NoGPGCheck)
	}
	var names []string
	for _, g := range mustGroups(t, []string{"fatimage"}, map[string]any{"appliance_dir": applianceDir}).sets.groups {
		names = append(names, g.Name)
	}
	if !slices.Contains(names, "eessi") {
		t.Error("fatimage does not expand to eessi (the builder is in it)")
	}
}

// The scripts run in order, each as its own sh -eu: a failing command in
// the middle of one fails the step naming the script.
func TestAfterPackagesScript(t *testing.T) {
	dir, bin := t.TempDir(), t.TempDir()
	log := filepath.Join(dir, "log")
	if err := os.WriteFile(filepath.Join(bin, "cvmfs_config"), []byte("#!/bin/sh\necho \"cvmfs_config $*\" >> \"$FATIMAGE_TEST_CALLS\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc, err := afterPackagesScript([]string{"eessi/cvmfs-setup.sh"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("FATIMAGE_TEST_CALLS", log)
	out, err := runLocal(t, dir, sc)
	if b, _ := os.ReadFile(log); err != nil || string(b) != "cvmfs_config setup\n" || !strings.Contains(out, "running eessi/cvmfs-setup.sh") {
		t.Errorf("err %v, calls %q\n%s", err, b, out)
	}
	if err := os.WriteFile(filepath.Join(bin, "cvmfs_config"), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err = runLocal(t, dir, sc)
	if err == nil || !strings.Contains(out, "!fatimage: run_after_packages: eessi/cvmfs-setup.sh failed") {
		t.Errorf("a failing setup passed: %v\n%s", err, out)
	}
	if _, err := afterPackagesScript([]string{"eessi/nope.sh"}); err == nil {
		t.Error("an unknown script was accepted")
	}
}
