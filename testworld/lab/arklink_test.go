package lab_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/pulpfake"
)

// TestArkLinkBoundsVMDownloads turns the realistic profile's link on
// (at a lower rate, so the bound is seconds) and downloads N bytes from
// the Ark double on a VM: it cannot take less than N ÷ rate plus the
// round trip (less the link's 5 ms of burst). A bound of the lab's
// network, not a timing of our code.
func TestArkLinkBoundsVMDownloads(t *testing.T) {
	labtest.Require(t)
	const size, rate, delay = 8 << 20, 4 << 20, 20 * time.Millisecond
	theLab.Pulp.AddDistribution(pulpfake.Distribution{BasePath: "linktest/blob", Files: map[string][]byte{"blob": bytes.Repeat([]byte("0123456789abcdef"), size/16)}})
	prev := theLab.Pulp.Link()
	theLab.Pulp.SetLink(pulpfake.Link{Delay: delay, Rate: rate})
	defer theLab.Pulp.SetLink(prev)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, _ := labtest.BootDial(ctx, t, theLab, "ark-link", "")
	out := strings.Fields(c.Run(t, fmt.Sprintf("curl -sS --max-time 60 -o /dev/null -w '%%{size_download} %%{time_total}' %s/linktest/blob/blob", theLab.Pulp.ContentURL())))
	if len(out) != 2 {
		t.Fatalf("curl said %q", out)
	}
	got, _ := strconv.Atoi(out[0])
	took, _ := strconv.ParseFloat(out[1], 64)
	floor := float64(size)/rate + 2*delay.Seconds() - 0.005 // pulpfake's linkBurst
	t.Logf("%d bytes in %.2f s (floor %.2f s)", got, took, floor)
	if got != size {
		t.Fatalf("downloaded %d bytes, want %d", got, size)
	}
	if took < floor {
		t.Errorf("%d bytes over a %d B/s link with %s each way took %.2f s, below the floor %.2f s: the link is not applied", size, rate, delay, took, floor)
	}
}
