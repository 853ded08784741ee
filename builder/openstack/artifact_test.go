package openstack

import (
	"regexp"
	"testing"
)

// Scripts written for the official builder take the image ID from the end
// of its artifact line; ours must read the same.
func TestArtifactStringIsOfficial(t *testing.T) {
	a := &Artifact{ImageID: "3f1c9a52-6e0b-4c43-8f43-5d7a1b2c9e10", ImageName: "openhpc-RL9-251126", Region: "RegionOne"}
	if got, want := a.String(), "An image was created: 3f1c9a52-6e0b-4c43-8f43-5d7a1b2c9e10"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if m := regexp.MustCompile(`An image was created: (\S+)$`).FindStringSubmatch(a.String()); m == nil || m[1] != a.ImageID {
		t.Errorf("a script's pattern reads %q from %q", m, a.String())
	}
}
