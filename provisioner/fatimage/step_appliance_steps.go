package fatimage

import (
	"context"
	"fmt"
	"path/filepath"
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

// stepApplianceSteps lists what the site's fatimage.yml runs, decided
// for the build host by the appliance step's resolution, and says what
// the plugin does natively and what runs through Ansible, and where.
func stepApplianceSteps(_ context.Context, s *state) error {
	site, res := s.plan.site, s.applianceRes
	s.say(fmt.Sprintf("appliance: what %s runs for the build host (environment %s)",
		filepath.Join(site.Repo, "ansible", "fatimage.yml"), filepath.Base(site.Environment)))
	steps, err := runningSteps(res, applianceSteps(s.applianceAll, s.plan.hasBuiltin))
	if err != nil {
		return err
	}
	run := &applianceRun{target: s.applianceTarget, res: res, steps: steps, seconds: map[int]float64{}}
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
		if phase != phasePre {
			if err := s.ansibleRepos(ctx, true); err != nil {
				return err
			}
		}
		for i, st := range run.steps {
			if st.phase != phase || st.native != "" || st.inHook() {
				continue
			}
			if err := s.runAnsibleStep(ctx, i, st); err != nil {
				return err
			}
		}
		if phase != phasePre {
			return s.ansibleRepos(ctx, false)
		}
		return nil
	}
}

// runAnsibleStep runs step i through the site's ansible-playbook. A step
// whose dnf enables source repositories is told first which of them are
// not the build's (foreignSources), and its failure then names them.
func (s *state) runAnsibleStep(ctx context.Context, i int, st applianceStep) error {
	run := s.appliance
	s.say("ansible: " + st.Label())
	hint, err := s.foreignSources(ctx, st)
	if err != nil {
		return err
	}
	if hint != "" {
		s.say("WARNING: " + hint)
	}
	tasksFrom := ""
	if v, ok := run.res.Expressions[st.TasksFrom]; ok {
		tasksFrom, _ = v.Value.(string)
	}
	start := time.Now()
	out := &uiWriter{ui: s.ui, redact: func(l string) string { return l }}
	if err := s.plan.site.RunStep(ctx, run.target, st.Step, tasksFrom, out); err != nil {
		if hint != "" {
			return fmt.Errorf("%s\n%w", hint, err)
		}
		return err
	}
	run.seconds[i] = time.Since(start).Seconds()
	return nil
}

// applianceEntry is one step of the site's fatimage.yml in image.json's
// "appliance": done natively, or run through Ansible.
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

// applianceStepsRecord adds to rec what ran natively and what through
// Ansible; rec is unchanged without the appliance steps.
func (s *state) applianceStepsRecord(rec *imageAppliance) {
	run := s.appliance
	if run == nil || rec == nil {
		return
	}
	rec.Native, rec.Ansible = []applianceEntry{}, []applianceEntry{}
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
}

// msg shows a line under the step's headline.
func (s *state) msg(m string) {
	s.ui.Message(m) //nolint:staticcheck // sub-messages of the step's headline: Message indents them
}

// relTo is path relative to dir when inside it.
func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// restripRepoFiles is a script taking out again (or disabling, as the
// repos step does) the sections of the build's repositories that a
// transaction's packages added to /etc/yum.repos.d since the repos step
// (epel-release's epel.repo, at public mirrors), so that a later dnf
// process reads the build's own, from the tmpfs, and no other.
func (s *state) restripRepoFiles() *vmScript {
	sc := newScript("repofiles")
	files := renderRepoFiles(s.plan.repos, "", "", false)
	stripRepoFiles(sc, files, *s.cfg.ReplaceRepos)
	if *s.cfg.ReplaceRepos && len(files) > 0 {
		sc.call("disable_other_repos", repoFileNames(files)...)
	}
	return sc
}

// ansibleRepos (on) gives the site's Ansible the build's repositories
// and no other: the transaction's packages may have added some to
// /etc/yum.repos.d since the repos step (epel-release's epel.repo, at
// public mirrors), which are taken out or disabled as the repos step
// does, and dnf.conf names the tmpfs the plugin's own dnf reads them
// from; off takes that out again, keeping what the site's roles wrote
// to dnf.conf meanwhile (the proxy role's proxy=; disable-repos writes
// the repository files back at the end).
func (s *state) ansibleRepos(ctx context.Context, on bool) error {
	if len(s.plan.repos) == 0 {
		return nil
	}
	sc := newScript("repofiles")
	if on {
		sc.add(s.restripRepoFiles())
		s.plan.buildRepoSecrets(sc, s.workDir)
		sc.call("ansible_repos_on")
	} else {
		sc.call("ansible_repos_off")
	}
	_, err := s.runScript(ctx, sc)
	return err
}
