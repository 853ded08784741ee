package cloud

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Timing profiles. "fast" is for unit-speed tests: every transition takes
// a fixed fraction of a second. "realistic" takes what real clouds take
// (see docs/lab.md for the figures and where they come from), with jitter,
// data moved at a stated rate and lists that lag behind creates.
const (
	ProfileFast      = "fast"
	ProfileRealistic = "realistic"
)

// ProfileTiming is the Timing of a named profile ("" = fast).
func ProfileTiming(name string) (Timing, error) {
	switch name {
	case "", ProfileFast:
		var t Timing
		t.defaults()
		return t, nil
	case ProfileRealistic:
		t := Timing{
			// Nova: scheduling, port binding and spawn until ACTIVE.
			ServerBuild: 20 * time.Second,
			// The guest's own boot until sshd answers (30-90 s on
			// GenericCloud images with cloud-init).
			GuestBoot: 45 * time.Second,
			// Nova's stop/start/reboot task (a graceful stop waits for
			// the guest; reboot 20-60 s including the guest).
			ServerAction: 15 * time.Second,
			ServerDelete: 5 * time.Second,
			// Snapshot and upload: a fixed part, plus the data at
			// TransferRate.
			ImageSave:    10 * time.Second,
			VolumeUpload: 15 * time.Second,
			// Volume from an image: 30-120 s for a 10 GB image.
			VolumeCreate:   20 * time.Second,
			VolumeDelete:   3 * time.Second,
			SnapshotCreate: 5 * time.Second,
			BackupCreate:   30 * time.Second,
			TransferRate:   100 << 20, // 100 MiB/s, a typical Ceph/Glance pipe
			Jitter:         0.3,
			ListLag:        time.Second,
		}
		t.defaults()
		return t, nil
	}
	return Timing{}, fmt.Errorf("LAB_PROFILE: unknown profile %q (want %q or %q)", name, ProfileFast, ProfileRealistic)
}

// took is how long a transition of base (plus bytes of data at
// TransferRate) takes this time: jittered by ±Jitter.
func (c *Cloud) took(base time.Duration, bytes int64) time.Duration {
	t := c.o.Timing
	d := base
	if t.TransferRate > 0 && bytes > 0 {
		d += time.Duration(float64(bytes) / float64(t.TransferRate) * float64(time.Second))
	}
	if t.Jitter > 0 {
		d = time.Duration(float64(d) * (1 + t.Jitter*(2*c.jitter.draw(base)-1)))
	}
	return d
}

// listableAt is when a resource created now first shows in lists: real
// clouds answer GET by id at once but lists (served from replicas and
// caches) may lag; between half of ListLag and ListLag.
func (c *Cloud) listableAt(created time.Time) time.Time {
	lag := c.o.Timing.ListLag
	if lag <= 0 {
		return created
	}
	return created.Add(lag/2 + time.Duration(rand.Int64N(int64(lag/2)+1)))
}

// listed says whether a resource that becomes listable at t is listed now.
func listed(t time.Time) bool { return t.IsZero() || !time.Now().Before(t) }

// diskBytes is the size of disk d for transfer times (0 when unknown).
func (c *Cloud) diskBytes(d string) int64 {
	if d == "" || c.o.Timing.TransferRate <= 0 {
		return 0
	}
	n, err := c.o.Hypervisor.DiskSize(d)
	if err != nil {
		return 0
	}
	return n
}

// jitterDraws are the jitter's random draws: independent until SeedJitter,
// then one fixed sequence per transition kind (its base duration).
type jitterDraws struct {
	mu   sync.Mutex
	seed uint64
	by   map[time.Duration]*rand.Rand // nil: not seeded
}

// SeedJitter makes the jitter of every transition kind a fixed sequence
// from now on: the n-th server build, guest boot, stop, snapshot, ...
// after SeedJitter(s) takes the same time whenever the seed is s. A
// benchmark seeds each round's builds alike, so contenders taking turns
// meet the same cloud (common random numbers) and their figures differ
// by what they do, not by chance.
func (c *Cloud) SeedJitter(seed uint64) {
	c.jitter.mu.Lock()
	defer c.jitter.mu.Unlock()
	c.jitter.seed = seed
	c.jitter.by = map[time.Duration]*rand.Rand{}
}

// draw is the next draw in [0, 1) for a transition of base.
func (j *jitterDraws) draw(base time.Duration) float64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.by == nil {
		return rand.Float64()
	}
	r := j.by[base]
	if r == nil {
		r = rand.New(rand.NewPCG(j.seed, uint64(base)))
		j.by[base] = r
	}
	return r.Float64()
}
