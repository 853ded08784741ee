package appliance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// TaskRef names a task file of a role: tasks/File in the role's directory
// as the site's Ansible finds it.
type TaskRef struct{ Role, File string }

func (r TaskRef) String() string { return r.Role + "/tasks/" + r.File }

// check refuses a ref that is not a file directly in an appliance role's
// tasks/ (a collection's role, a path).
func (r TaskRef) check() error {
	if !roleRE.MatchString(r.Role) || strings.Count(r.Role, ".") == 2 || r.File != filepath.Base(r.File) {
		return fmt.Errorf("task file %s: a role of the appliance's and a file name", r)
	}
	return nil
}

// TaskPackages are the package lists a task file's package tasks name
// (the `name` of each dnf, yum or package task that does not remove,
// blocks included), as
// written: values the appliance writes into a task rather than a variable
// (vnc_compute.yml's turbovnc-3.0.1), so an appliance bump of them reaches
// the image without a plugin release.
type TaskPackages struct {
	// Path is the file read.
	Path  string
	Lists [][]string
	// Error says why the file gave no lists.
	Error string
}

// packageModules are the modules whose `name` lists packages.
var packageModules = []string{"ansible.builtin.dnf", "dnf", "ansible.builtin.yum", "yum", "ansible.builtin.package", "package"}

// readTaskPackages reads ref's task file from the site's role; missing
// records a role the site has not got (as for a query's role).
func (s *Site) readTaskPackages(ref TaskRef, missing map[string]string) (TaskPackages, error) {
	if err := ref.check(); err != nil {
		return TaskPackages{}, err
	}
	dir, err := s.FindRole(ref.Role)
	if err != nil {
		return TaskPackages{}, err
	}
	if dir == "" {
		where, err := s.missingRole(ref.Role)
		missing[ref.Role] = where
		return TaskPackages{}, err
	}
	out := TaskPackages{Path: filepath.Join(dir, "tasks", ref.File)}
	data, err := os.ReadFile(out.Path)
	if err == nil {
		var tasks []any
		if err = yaml.Unmarshal(data, &tasks); err == nil {
			out.Lists, err = packageLists(tasks)
		}
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

// packageLists are the `name` lists of the package tasks among tasks and
// their blocks, in order.
func packageLists(tasks []any) ([][]string, error) {
	var out [][]string
	for _, it := range tasks {
		t, _ := it.(map[string]any)
		for _, key := range []string{"block", "rescue", "always"} {
			if inner, ok := t[key].([]any); ok {
				lists, err := packageLists(inner)
				if err != nil {
					return nil, err
				}
				out = append(out, lists...)
			}
		}
		i := slices.IndexFunc(packageModules, func(m string) bool { _, ok := t[m]; return ok })
		if i < 0 {
			continue
		}
		args, ok := t[packageModules[i]].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("task %q: %s's arguments are not a mapping", str(t["name"]), packageModules[i])
		}
		if state := str(args["state"]); state == "absent" || state == "removed" {
			continue // removes, installs nothing
		}
		names, err := packageNames(args["name"])
		if err != nil {
			return nil, fmt.Errorf("task %q: %w", str(t["name"]), err)
		}
		out = append(out, names)
	}
	return out, nil
}

// packageNames is a package task's `name`: a list, or a string of names
// separated by commas (as the dnf module splits it).
func packageNames(v any) ([]string, error) {
	var raw []any
	switch x := v.(type) {
	case string:
		for _, n := range strings.Split(x, ",") {
			raw = append(raw, strings.TrimSpace(n))
		}
	case []any:
		raw = x
	default:
		return nil, fmt.Errorf("name %v is neither a list nor a string", v)
	}
	var out []string
	for _, n := range raw {
		s, ok := n.(string)
		if !ok {
			return nil, fmt.Errorf("name %v is not a package name", n)
		}
		out = append(out, s)
	}
	return out, nil
}
