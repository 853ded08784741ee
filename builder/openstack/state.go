package openstack

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/packer-plugin-sdk/multistep"
	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"
	"github.com/hashicorp/packer-plugin-sdk/packerbuilderdata"
)

// tracker records what the build has created and not yet deleted, so a
// build stopped with -on-error=abort can say what it left behind.
type tracker struct {
	mu   sync.Mutex
	live map[string]string // "kind id" -> description
}

func newTracker() *tracker { return &tracker{live: map[string]string{}} }

func (t *tracker) Add(kind, id, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live[kind+" "+id] = fmt.Sprintf("%s %s (%s)", kind, id, name)
}

func (t *tracker) Done(kind, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, kind+" "+id)
}

// List is sorted so messages are stable.
func (t *tracker) List() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.live))
	for _, v := range t.live {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func trackerOf(state multistep.StateBag) *tracker {
	if t, ok := state.GetOk("resources"); ok {
		return t.(*tracker)
	}
	t := newTracker()
	state.Put("resources", t)
	return t
}

// halt records err, reports it and stops the build.
func halt(state multistep.StateBag, err error) multistep.StepAction {
	state.Put("error", err)
	state.Get("ui").(packersdk.Ui).Error(err.Error())
	return multistep.ActionHalt
}

// cleanupContext bounds a Cleanup: the build's own context may already be
// cancelled (Ctrl-C), but deleting must still happen. Its waits report
// progress to the build's Ui.
func cleanupContext(state multistep.StateBag, c *Config) (context.Context, context.CancelFunc) {
	ctx := context.Background()
	if ui, ok := state.Get("ui").(packersdk.Ui); ok {
		ctx = withProgress(ctx, ui.Say)
	}
	return context.WithTimeout(ctx, c.StateTimeout+time.Minute)
}

// buildFailed reports whether the build is ending without success.
func buildFailed(state multistep.StateBag) bool {
	_, errored := state.GetOk("error")
	_, cancelled := state.GetOk(multistep.StateCancelled)
	_, halted := state.GetOk(multistep.StateHalted)
	return errored || cancelled || halted
}

func getString(state multistep.StateBag, key string) string {
	s, _ := state.Get(key).(string)
	return s
}

// setGenerated publishes a `build.<name>` value for templates.
func setGenerated(state multistep.StateBag, name, value string) {
	(&packerbuilderdata.GeneratedData{State: state}).Put(name, value)
}
