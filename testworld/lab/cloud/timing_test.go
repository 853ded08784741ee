package cloud

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

func TestProfiles(t *testing.T) {
	fast, err := ProfileTiming("")
	if err != nil || fast.ServerBuild != 200*time.Millisecond || fast.Jitter != 0 || fast.ListLag != 0 || fast.GuestBoot != 0 {
		t.Fatalf("fast: %+v %v", fast, err)
	}
	real, err := ProfileTiming(ProfileRealistic)
	if err != nil {
		t.Fatal(err)
	}
	// the documented real-world ranges (docs/lab.md)
	if real.GuestBoot < 30*time.Second || real.GuestBoot > 90*time.Second || real.ListLag != time.Second ||
		real.Jitter <= 0 || real.TransferRate <= 0 || real.ServerBuild < 10*time.Second {
		t.Fatalf("realistic: %+v", real)
	}
	if _, err := ProfileTiming("slow"); err == nil || !strings.HasPrefix(err.Error(), "LAB_PROFILE: unknown profile \"slow\"") {
		t.Fatalf("unknown profile: %v", err)
	}
}

func TestTookJitterAndRate(t *testing.T) {
	c := &Cloud{o: Options{Timing: Timing{Jitter: 0.3, TransferRate: 100 << 20}}}
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		d := c.took(10*time.Second, 0)
		if d < 7*time.Second || d > 13*time.Second {
			t.Fatalf("10s ±30%% gave %s", d)
		}
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Fatalf("no jitter: %d distinct durations in 50", len(seen))
	}
	c.o.Timing.Jitter = 0
	if d := c.took(time.Second, 200<<20); d != 3*time.Second {
		t.Fatalf("1s + 200 MiB at 100 MiB/s = %s", d)
	}
}

// TestListLag: with a list lag, a new volume or server answers GET at
// once but shows in lists only later, as on a real cloud whose lists come
// from replicas; the old lab listed everything at once, so code that
// listed right after creating (and assumed it saw its resource) passed.
func TestListLag(t *testing.T) {
	l := newLab(t, func(o *Options) { o.Timing.ListLag = 4 * time.Second })
	cl := l.clients()
	start := time.Now()
	v, err := volumes.Create(ctx, cl.volume, volumes.CreateOpts{Size: 1, Name: "lagging"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	s, err := servers.Create(ctx, cl.compute, servers.CreateOpts{Name: "lagging", FlavorRef: testFlavor, ImageRef: l.imageID, Networks: "auto"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := volumes.Get(ctx, cl.volume, v.ID).Extract(); err != nil {
		t.Fatalf("GET of a new volume: %v", err)
	}
	countVolumes := func() int {
		pages, err := volumes.List(cl.volume, volumes.ListOpts{}).AllPages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all, _ := volumes.ExtractVolumes(pages)
		return len(all)
	}
	countServers := func() int {
		pages, err := servers.List(cl.compute, servers.ListOpts{}).AllPages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all, _ := servers.ExtractServers(pages)
		return len(all)
	}
	nv, ns := countVolumes(), countServers()
	if time.Since(start) >= 2*time.Second {
		t.Fatalf("creating and listing took %s, more than half the lag: cannot tell", time.Since(start))
	}
	if nv != 0 || ns != 0 {
		t.Fatalf("listed at once: %d volumes, %d servers", nv, ns)
	}
	waitFor(t, 10*time.Second, "listed", func() (bool, error) { return countVolumes() == 1 && countServers() == 1, nil })
	if time.Since(start) < 2*time.Second {
		t.Fatalf("listed after %s, before half the lag", time.Since(start))
	}
	waitServer(t, cl.compute, s.ID, "ACTIVE")
	waitVolume(t, cl.volume, v.ID, "available")
	servers.Delete(ctx, cl.compute, s.ID)
	volumes.Delete(ctx, cl.volume, v.ID, nil)
	waitServerGone(t, cl.compute, s.ID)
	waitVolumeGone(t, cl.volume, v.ID)
	l.assertClean()
}

// Two clouds seeded alike draw the same time for the n-th transition of
// each kind, whatever the kinds' interleaving; another seed draws others,
// and within a kind the draws still vary.
func TestSeedJitterRepeatsEachKindsDraws(t *testing.T) {
	timing := Timing{Jitter: 0.3}
	draws := func(seed uint64, bootFirst bool) (boots, builds []time.Duration) {
		c := &Cloud{o: Options{Timing: timing}}
		c.SeedJitter(seed)
		for range 3 {
			if bootFirst {
				boots = append(boots, c.took(45*time.Second, 0))
				builds = append(builds, c.took(20*time.Second, 0))
			} else {
				builds = append(builds, c.took(20*time.Second, 0))
				boots = append(boots, c.took(45*time.Second, 0))
			}
		}
		return boots, builds
	}
	b1, s1 := draws(1, true)
	b2, s2 := draws(1, false)
	if !slices.Equal(b1, b2) || !slices.Equal(s1, s2) {
		t.Errorf("seed 1: boots %v and %v, builds %v and %v", b1, b2, s1, s2)
	}
	if b1[0] == b1[1] && b1[1] == b1[2] {
		t.Errorf("one kind's draws do not vary: %v", b1)
	}
	if b3, _ := draws(2, true); slices.Equal(b1, b3) {
		t.Errorf("seeds 1 and 2 drew the same boots %v", b1)
	}
}
