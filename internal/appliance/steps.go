package appliance

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Step is one unit of what fatimage.yml runs: a role (or one of its task
// files), an included task file, or a plain module task, in its play.
type Step struct {
	// File is the playbook holding the step, relative to the checkout, or
	// the hook's path for a hook's steps.
	File string
	// Play is the play's name and Hosts its host pattern.
	Play, Hosts string
	// Hook names the environment hook ("pre", "post-bootstrap", ...) the
	// step comes from; for Kind "hook" it is the hook's own entry.
	Hook string
	// Kind is "role", "tasks" (an imported or included task file),
	// "module" (a plain task) or "hook" (the point where fatimage.yml runs
	// an environment hook; Name is the hook file's path).
	Kind string
	// Name is the role, the task file or the module; TasksFrom the role's
	// task file when not main.
	Name, TasksFrom string
	// TaskName is the task's `name:` ("" for a play's `roles:` entry).
	TaskName string
	// Task is the task as written (kinds "tasks" and "module"), to run it
	// alone through Ansible.
	Task map[string]any
	// Absent is set on a hook the environment does not have.
	Absent bool
	// When holds the conditions gating the step (blocks' and the task's).
	When []string
	// Tags are the play's and the task's tags.
	Tags []string
	// Vars are the task's own vars, as written (Ansible templates them
	// when the step runs: pass them to Play.Vars).
	Vars map[string]any
}

func (st Step) String() string {
	name := st.Name
	if st.TasksFrom != "" {
		name += " (" + st.TasksFrom + ")"
	}
	return fmt.Sprintf("%s: %s %s on %q", st.File, st.Kind, name, st.Hosts)
}

// hookRE finds the hook an import stands for in its hook_path variable.
var hookRE = regexp.MustCompile(`/hooks/([A-Za-z0-9_.-]+)\.yml$`)

// Steps lists what ansible/fatimage.yml runs, in order, following its
// imports and the environment's hooks. It reads YAML only: which steps
// the build host runs is for [Result.Runs] to say, from Ansible.
func (s *Site) Steps() ([]Step, error) {
	l := lister{site: s}
	err := l.playbook(filepath.Join(s.Repo, "ansible", "fatimage.yml"), "", nil, 0)
	return l.steps, err
}

type lister struct {
	site  *Site
	steps []Step
}

func (l *lister) rel(path string) string {
	if r, err := filepath.Rel(l.site.Repo, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func (l *lister) playbook(path, hook string, when []string, depth int) error {
	if depth > 20 {
		return fmt.Errorf("%s: playbook imports nest too deep", l.rel(path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var plays []map[string]any
	if err := yaml.Unmarshal(data, &plays); err != nil {
		return fmt.Errorf("%s: %w", l.rel(path), err)
	}
	for _, p := range plays {
		pwhen := append(append([]string{}, when...), conditions(p["when"])...)
		imp, isImport := firstOf(p, "import_playbook")
		if !isImport {
			l.play(path, hook, p, pwhen)
			continue
		}
		target, _ := imp.(string)
		if err := l.importPlaybook(path, target, p, pwhen, depth); err != nil {
			return err
		}
	}
	return nil
}

func (l *lister) importPlaybook(from, target string, p map[string]any, when []string, depth int) error {
	if !strings.Contains(target, "{{") {
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(from), target)
		}
		return l.playbook(target, "", when, depth+1)
	}
	vars, _ := p["vars"].(map[string]any)
	hookPath, _ := vars["hook_path"].(string)
	m := hookRE.FindStringSubmatch(hookPath)
	if m == nil {
		return fmt.Errorf("%s: import_playbook %q: a templated import that is not an environment hook", l.rel(from), target)
	}
	// The appliance imports a hook only when it exists (`hook_path | exists`).
	file := filepath.Join(l.site.Environment, "hooks", m[1]+".yml")
	_, err := os.Stat(file)
	l.steps = append(l.steps, Step{File: l.rel(from), Play: str(p["name"]), Kind: "hook", Hook: m[1], Name: file, Absent: err != nil})
	if err != nil {
		return nil
	}
	return l.playbook(file, m[1], nil, depth+1)
}

func (l *lister) play(path, hook string, p map[string]any, when []string) {
	base := Step{File: l.rel(path), Play: str(p["name"]), Hosts: hostsString(p["hosts"]), Hook: hook, Tags: strs(p["tags"])}
	if hook != "" {
		base.File = path
	}
	for _, key := range []string{"pre_tasks", "roles", "tasks", "post_tasks"} {
		items, _ := p[key].([]any)
		for _, it := range items {
			if key == "roles" {
				st := base
				st.Kind, st.When = "role", when
				if m, ok := it.(map[string]any); ok {
					st.Name = str(m["role"]) + str(m["name"])
					st.When = append(append([]string{}, when...), conditions(m["when"])...)
				} else {
					st.Name = str(it)
				}
				l.steps = append(l.steps, st)
				continue
			}
			if t, ok := it.(map[string]any); ok {
				l.task(base, t, when)
			}
		}
	}
}

func (l *lister) task(base Step, t map[string]any, when []string) {
	when = append(append([]string{}, when...), conditions(t["when"])...)
	if _, ok := t["block"]; ok {
		for _, key := range []string{"block", "rescue", "always"} {
			items, _ := t[key].([]any)
			for _, it := range items {
				if sub, ok := it.(map[string]any); ok {
					l.task(base, sub, when)
				}
			}
		}
		return
	}
	st := base
	st.When, st.Tags = when, append(append([]string{}, base.Tags...), strs(t["tags"])...)
	st.Vars, _ = t["vars"].(map[string]any)
	st.TaskName, st.Task = str(t["name"]), t
	if arg, ok := firstOf(t, "import_role", "include_role"); ok {
		m, _ := arg.(map[string]any)
		st.Kind, st.Name, st.TasksFrom = "role", str(m["name"]), str(m["tasks_from"])
	} else if arg, ok := firstOf(t, "import_tasks", "include_tasks"); ok {
		st.Kind, st.Name = "tasks", str(arg)
		if m, ok := arg.(map[string]any); ok {
			st.Name = str(m["file"])
		}
	} else {
		st.Kind, st.Name = "module", moduleOf(t)
	}
	l.steps = append(l.steps, st)
}

// firstOf finds an action under its short or FQCN name.
func firstOf(m map[string]any, names ...string) (any, bool) {
	for _, n := range names {
		for _, k := range []string{n, "ansible.builtin." + n, "ansible.legacy." + n} {
			if v, ok := m[k]; ok {
				return v, true
			}
		}
	}
	return nil, false
}

// taskKeywords are the task keys that are not the action.
var taskKeywords = map[string]bool{
	"name": true, "when": true, "tags": true, "vars": true, "become": true, "become_user": true,
	"become_method": true, "become_flags": true, "register": true, "loop": true, "loop_control": true,
	"notify": true, "ignore_errors": true, "ignore_unreachable": true, "delegate_to": true,
	"delegate_facts": true, "args": true, "no_log": true, "changed_when": true, "failed_when": true,
	"environment": true, "until": true, "retries": true, "delay": true, "run_once": true,
	"check_mode": true, "diff": true, "any_errors_fatal": true, "module_defaults": true,
	"collections": true, "throttle": true, "timeout": true, "listen": true, "debugger": true,
	"connection": true, "async": true, "poll": true, "remote_user": true, "port": true,
}

func moduleOf(t map[string]any) string {
	if a, ok := t["action"]; ok {
		return strings.Fields(str(a) + " ?")[0]
	}
	if a, ok := t["local_action"]; ok {
		return strings.Fields(str(a) + " ?")[0]
	}
	for k := range t {
		if !taskKeywords[k] && !strings.HasPrefix(k, "with_") {
			return k
		}
	}
	return ""
}

func conditions(v any) []string {
	switch w := v.(type) {
	case nil:
		return nil
	case []any:
		var out []string
		for _, c := range w {
			out = append(out, str(c))
		}
		return out
	default:
		return []string{str(w)}
	}
}

func hostsString(v any) string {
	if l, ok := v.([]any); ok {
		return strings.Join(strs(l), ",")
	}
	return str(v)
}

func strs(v any) []string {
	switch l := v.(type) {
	case []any:
		var out []string
		for _, x := range l {
			out = append(out, str(x))
		}
		return out
	case nil:
		return nil
	default:
		return strings.Split(str(l), ",")
	}
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case map[string]any:
		// an action given as a mapping with `module:`
		return str(x["module"])
	default:
		return fmt.Sprint(x)
	}
}

// AddSteps asks the request for the host patterns and conditions that
// decide which steps run, and the templated task files they name.
func (r *Request) AddSteps(steps []Step) {
	seenP, seenC, seenE := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range r.Expressions {
		seenE[e] = true
	}
	for _, p := range r.Patterns {
		seenP[p] = true
	}
	for _, c := range r.Conditions {
		seenC[c] = true
	}
	for _, st := range steps {
		if st.Kind == "hook" {
			continue
		}
		if !seenP[st.Hosts] {
			seenP[st.Hosts] = true
			r.Patterns = append(r.Patterns, st.Hosts)
		}
		if strings.Contains(st.TasksFrom, "{{") && !seenE[st.TasksFrom] {
			seenE[st.TasksFrom] = true
			r.Expressions = append(r.Expressions, st.TasksFrom)
		}
		for _, c := range st.When {
			if !seenC[c] {
				seenC[c] = true
				r.Conditions = append(r.Conditions, c)
			}
		}
	}
}

// Runs says whether the build host runs the step: its play's hosts match
// and every condition holds. A condition Ansible cannot evaluate before
// the play runs (a loop's item, a result registered by an earlier task)
// counts as holding and is returned in undecided. An error says that the
// request did not ask for the step (Request.AddSteps).
func (res *Result) Runs(st Step) (runs bool, undecided []string, err error) {
	if st.Kind == "hook" {
		return !st.Absent, nil, nil
	}
	match, ok := res.Patterns[st.Hosts]
	if !ok {
		return false, nil, fmt.Errorf("%s: host pattern not resolved", st)
	}
	if !match {
		return false, nil, nil
	}
	for _, c := range st.When {
		t, ok := res.Conditions[c]
		switch {
		case !ok:
			return false, nil, fmt.Errorf("%s: condition %q not resolved", st, c)
		case t.Error != "":
			undecided = append(undecided, c)
		case !t.Holds:
			return false, nil, nil
		}
	}
	return true, undecided, nil
}
