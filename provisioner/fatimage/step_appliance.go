package fatimage

import (
	"context"
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
)

// applianceRun is what the appliance step learnt of the site's
// fatimage.yml for this build host, and what the Ansible phases ran.
type applianceRun struct {
	target appliance.Target
	res    *appliance.Result
	// steps are those the build host runs, in fatimage.yml's order.
	steps []applianceStep
	// seconds are the durations of the steps run through Ansible, by index in steps.
	seconds map[int]float64
}

// stepAppliance lists what the site's fatimage.yml runs, lets the site's
// Ansible say what of it runs for the build host (one resolution; the
// variables step of issue #25 item 1 can share it), and says what the
// plugin does natively and what runs through Ansible, and where.
func stepAppliance(ctx context.Context, s *state) error {
	site := s.plan.site
	s.say(fmt.Sprintf("appliance: what %s runs for the build host (environment %s)",
		filepath.Join(site.Repo, "ansible", "fatimage.yml"), filepath.Base(site.Environment)))
	tg, err := applianceTarget(s.generated)
	if err != nil {
		return err
	}
	all, err := site.Steps()
	if err != nil {
		return fmt.Errorf("appliance: %w", err)
	}
	var req appliance.Request
	req.AddSteps(all)
	res, err := site.Resolve(ctx, tg, req, log.Writer())
	if err != nil {
		return err
	}
	s.say("appliance: " + res.Summary())
	run := &applianceRun{target: tg, res: res, seconds: map[int]float64{}}
	if run.steps, err = runningSteps(res, applianceSteps(all, s.plan.hasBuiltin)); err != nil {
		return err
	}
	for _, st := range run.steps {
		if st.native != "" {
			s.msg(fmt.Sprintf("native: %s: %s", st.Label(), st.native))
		}
	}
	for _, st := range run.steps {
		if st.native == "" && !st.inHook() {
			s.msg(fmt.Sprintf("through Ansible (%s phase): %s: %s", st.phase, st.Label(), st.why))
		}
	}
	s.appliance = run
	return nil
}

// runningSteps keeps the steps the build host runs. A hook runs when a
// step of it does.
func runningSteps(res *appliance.Result, steps []applianceStep) ([]applianceStep, error) {
	var out []applianceStep
	for i, st := range steps {
		runs, _, err := res.Runs(st.Step)
		if err != nil {
			return nil, err
		}
		if runs && st.Kind == "hook" {
			runs = false
			for j := i + 1; j < len(steps) && steps[j].inHook() && steps[j].Hook == st.Hook; j++ {
				inner, _, err := res.Runs(steps[j].Step)
				if err != nil {
					return nil, err
				}
				runs = runs || inner
			}
		}
		if runs {
			out = append(out, st)
		}
	}
	return out, nil
}

// ansibleAt is whether a phase has steps to run through Ansible.
func ansibleAt(phase string) func(*state) bool {
	return func(s *state) bool {
		if s.appliance == nil {
			return false
		}
		for _, st := range s.appliance.steps {
			if st.phase == phase && st.native == "" && !st.inHook() {
				return true
			}
		}
		return false
	}
}

// ansiblePhase runs the phase's steps through the site's ansible-playbook,
// in fatimage.yml's order, Ansible's output under the step's headline.
func ansiblePhase(phase string) func(context.Context, *state) error {
	return func(ctx context.Context, s *state) error {
		run := s.appliance
		for i, st := range run.steps {
			if st.phase != phase || st.native != "" || st.inHook() {
				continue
			}
			s.say("ansible: " + st.Label())
			tasksFrom := ""
			if v, ok := run.res.Expressions[st.TasksFrom]; ok {
				tasksFrom, _ = v.Value.(string)
			}
			start := time.Now()
			out := &uiWriter{ui: s.ui, redact: func(l string) string { return l }}
			if err := s.plan.site.RunStep(ctx, run.target, st.Step, tasksFrom, out); err != nil {
				return err
			}
			run.seconds[i] = time.Since(start).Seconds()
		}
		return nil
	}
}

// applianceTarget is the build VM as Packer's communicator reaches it
// (its generated data), as the appliance's ansible provisioner reaches it
// with use_proxy = false.
func applianceTarget(g map[string]any) (appliance.Target, error) {
	str := func(k string) string { v, _ := g[k].(string); return v }
	t := appliance.Target{Host: str("Host"), User: str("User"), PrivateKey: []byte(str("SSHPrivateKey")),
		PrivateKeyFile: str("SSHPrivateKeyFile")}
	switch p := g["Port"].(type) {
	case int:
		t.Port = p
	case int64:
		t.Port = int(p)
	case float64:
		t.Port = int(p)
	case string:
		t.Port, _ = strconv.Atoi(p)
	}
	if ct := str("ConnType"); ct != "" && ct != "ssh" {
		return t, fmt.Errorf("appliance: the communicator is %s: the site's Ansible reaches the build VM over ssh", ct)
	}
	if t.Host == "" || t.User == "" || (len(t.PrivateKey) == 0 && t.PrivateKeyFile == "") {
		return t, errors.New("appliance: Packer gave no SSH host, user and private key for the build VM " +
			"(the site's Ansible connects as the appliance's does, with use_proxy = false: an SSH key is needed, not an agent)")
	}
	return t, nil
}

// applianceRecord is image.json's "appliance": what of the site's
// fatimage.yml ran natively and what through Ansible.
type applianceRecord struct {
	Commit      string           `json:"commit"`
	Environment string           `json:"environment"`
	Native      []applianceEntry `json:"native"`
	Ansible     []applianceEntry `json:"ansible"`
}

type applianceEntry struct {
	// Kind is "role", "task" or "hook"; Name the role, the task's name
	// (or module) or the hook's; File the playbook holding it.
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	TasksFrom string `json:"tasks_from,omitempty"`
	File      string `json:"file"`
	// By is what did it natively; Phase and Seconds where and how long
	// it ran through Ansible.
	By      string  `json:"by,omitempty"`
	Phase   string  `json:"phase,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
}

func (s *state) applianceRecord() *applianceRecord {
	run := s.appliance
	if run == nil {
		return nil
	}
	rec := &applianceRecord{Commit: dashIfEmpty(run.res.Commit), Environment: filepath.Base(run.res.Environment),
		Native: []applianceEntry{}, Ansible: []applianceEntry{}}
	for i, st := range run.steps {
		if st.inHook() {
			continue
		}
		e := applianceEntry{Kind: st.Kind, Name: st.Name, TasksFrom: st.TasksFrom, File: st.File}
		switch st.Kind {
		case "hook":
			e.Name, e.File = st.Hook, relTo(s.plan.site.Repo, st.Name)
		case "module", "tasks":
			e.Kind = "task"
			if st.TaskName != "" {
				e.Name = st.TaskName
			}
		}
		if st.native != "" {
			e.By = st.native
			rec.Native = append(rec.Native, e)
			continue
		}
		e.Phase, e.Seconds = st.phase, float64(int(run.seconds[i]*10))/10
		rec.Ansible = append(rec.Ansible, e)
	}
	return rec
}

// msg shows a line under the step's headline.
func (s *state) msg(m string) {
	s.ui.Message(m) //nolint:staticcheck // sub-messages of the step's headline: Message indents them
}

func dashIfEmpty(v string) string {
	if v == "" {
		return "-"
	}
	return v
}

// relTo is path relative to dir when inside it.
func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
