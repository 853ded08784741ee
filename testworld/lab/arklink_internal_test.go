package lab

import (
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// Only the realistic profile puts the VMs behind a link (make test's fast
// profile stays at loopback speed), and a link set by the caller wins.
func TestProfileArkLink(t *testing.T) {
	set := pulpfake.Link{Delay: time.Millisecond}
	for _, c := range []struct {
		set     pulpfake.Link
		profile string
		want    pulpfake.Link
	}{
		{pulpfake.Link{}, "", pulpfake.Link{}},
		{pulpfake.Link{}, "fast", pulpfake.Link{}},
		{pulpfake.Link{}, "realistic", pulpfake.Link{Delay: 20 * time.Millisecond, Rate: 50_000_000}},
		{set, "realistic", set},
		{set, "fast", set},
	} {
		if got := profileArkLink(c.set, c.profile); got != c.want {
			t.Errorf("profileArkLink(%+v, %q) = %+v, want %+v", c.set, c.profile, got, c.want)
		}
	}
}
