package appliance

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// RunStep runs one step of fatimage.yml on the build VM through the
// site's ansible-playbook, as its play runs it (on `builder`, with become
// and facts): a role by importing it with the step's task file and vars,
// a task as written (a task file's path made absolute), a hook as its
// whole playbook. tasksFrom replaces a templated task file with Ansible's
// value of it (Result.Expressions).
func (s *Site) RunStep(ctx context.Context, t Target, st Step, tasksFrom string, out io.Writer) error {
	switch st.Kind {
	case "hook":
		return s.Run(ctx, t, Play{Playbook: st.Name}, out)
	case "role":
		if tasksFrom == "" {
			tasksFrom = st.TasksFrom
		}
		return s.Run(ctx, t, Play{Role: st.Name, TasksFrom: tasksFrom, Vars: st.Vars}, out)
	}
	if st.Task == nil {
		return fmt.Errorf("appliance run of %s: no task", st.Label())
	}
	dir, err := os.MkdirTemp("", "fatimage-step-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	book, err := yaml.Marshal([]play{{"name": "fatimage: " + st.Label(), "hosts": "builder", "become": true,
		"gather_facts": true, "tasks": []task{s.absoluteTask(st)}}})
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "task.yml")
	if err := os.WriteFile(file, book, 0o600); err != nil {
		return err
	}
	return s.Run(ctx, t, Play{Playbook: file}, out)
}

// absoluteTask is the step's task with an imported task file's relative
// path made absolute (Ansible resolves it against the playbook's
// directory, which the run's playbook does not share).
func (s *Site) absoluteTask(st Step) task {
	t := task{}
	for k, v := range st.Task {
		t[k] = v
	}
	from := st.File
	if !filepath.IsAbs(from) {
		from = filepath.Join(s.Repo, from)
	}
	for _, k := range []string{"import_tasks", "include_tasks"} {
		for _, key := range []string{k, "ansible.builtin." + k, "ansible.legacy." + k} {
			switch v := t[key].(type) {
			case string:
				if !filepath.IsAbs(v) {
					t[key] = filepath.Join(filepath.Dir(from), v)
				}
			case map[string]any:
				if f, ok := v["file"].(string); ok && !filepath.IsAbs(f) {
					m := map[string]any{}
					for mk, mv := range v {
						m[mk] = mv
					}
					m["file"] = filepath.Join(filepath.Dir(from), f)
					t[key] = m
				}
			}
		}
	}
	return t
}
