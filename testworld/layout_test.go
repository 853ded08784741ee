// Package testworld_test checks the line between the plugin and its test
// world: nothing under testworld/ may be linked into the plugin binary.
package testworld_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/stackhpc/packer-plugin-fatimage"

// TestPluginLinksNoTestWorld lists the plugin binary's dependency closure
// (the module root's main package, without tests) and fails on any package
// of the test world. It also requires the closure to hold the plugin's own
// components, so an empty or failed listing cannot pass.
func TestPluginLinksNoTestWorld(t *testing.T) {
	out := listPlugin(t, "")
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	for _, want := range []string{module, module + "/builder/openstack", module + "/provisioner/fatimage", module + "/datasource/ark", module + "/internal/pulp"} {
		if !deps[want] {
			t.Errorf("the plugin's dependency closure lacks %s: the listing is not the plugin's", want)
		}
	}
	for p := range deps {
		if p == module+"/testworld" || strings.HasPrefix(p, module+"/testworld/") {
			t.Errorf("the plugin binary links test-world package %s", p)
		}
	}
}

// listPlugin runs `go list -deps` over the plugin binary's package
// closure, without tests: import paths, or with jsonFields the -json
// records of those fields.
func listPlugin(t *testing.T, jsonFields string) []byte {
	t.Helper()
	// go test puts its own GOROOT/bin first on the test's PATH
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to list the plugin's dependencies: %v", err)
	}
	args := []string{"list", "-deps", "-test=false"}
	if jsonFields != "" {
		args = append(args, "-json="+jsonFields)
	}
	cmd := exec.Command(goBin, append(args, ".")...)
	cmd.Dir = ".." // the module root: package main, the plugin binary
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps: %v\n%s", err, stderr)
	}
	return out
}
