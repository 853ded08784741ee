package appliance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// Play selects what Run runs: a playbook (the checkout's, a hook, ...),
// optionally narrowed by tags, or one role.
type Play struct {
	// Playbook is a playbook file; relative paths are under the checkout.
	Playbook string
	// Tags and SkipTags narrow the playbook (--tags, --skip-tags).
	Tags, SkipTags []string
	// Role, instead of a playbook, runs one role (TasksFrom: one of its
	// task files) on the build host with become and facts, as
	// fatimage.yml's install plays run theirs.
	Role, TasksFrom string
	// Vars are the role task's vars (Step.Vars), templated by Ansible.
	Vars map[string]any
}

// Run runs the selection against the build VM with the site's
// ansible-playbook, composed as the appliance's build composes it (see
// [Site.Resolve]); Ansible's output goes to out. The appliance's
// template adds -vv; here the site's ansible.cfg alone sets verbosity.
func (s *Site) Run(ctx context.Context, t Target, p Play, out io.Writer) error {
	if (p.Playbook == "") == (p.Role == "") {
		return errors.New("appliance run: give a playbook or a role, not both")
	}
	if p.Playbook != "" && (p.TasksFrom != "" || len(p.Vars) > 0) {
		return errors.New("appliance run: tasks_from and vars go with a role, not a playbook")
	}
	if p.Role != "" && !roleRE.MatchString(p.Role) {
		return fmt.Errorf("appliance run: role %q: not a role name", p.Role)
	}
	inv, err := s.prepare(t)
	if err != nil {
		return err
	}
	defer inv.close()
	book := p.Playbook
	if book != "" && !filepath.IsAbs(book) {
		book = filepath.Join(s.Repo, book)
	}
	if p.Role != "" {
		if book, err = inv.rolePlaybook(p); err != nil {
			return err
		}
	}
	var args []string
	for _, tag := range p.Tags {
		args = append(args, "--tags", tag)
	}
	for _, tag := range p.SkipTags {
		args = append(args, "--skip-tags", tag)
	}
	if err := inv.playbook(ctx, s, out, append(args, book)...); err != nil {
		return fmt.Errorf("appliance run of %s on %s: %w", p.label(), t.address(), err)
	}
	return nil
}

func (p Play) label() string {
	if p.Role == "" {
		return p.Playbook
	}
	if p.TasksFrom != "" {
		return "role " + p.Role + " (" + p.TasksFrom + ")"
	}
	return "role " + p.Role
}

// rolePlaybook writes a one-play playbook running the role.
func (inv *invocation) rolePlaybook(p Play) (string, error) {
	role := map[string]any{"name": p.Role}
	if p.TasksFrom != "" {
		role["tasks_from"] = p.TasksFrom
	}
	t := task{"ansible.builtin.import_role": role}
	if len(p.Vars) > 0 {
		t["vars"] = p.Vars
	}
	data, err := yaml.Marshal([]play{{"name": "fatimage: " + p.label(), "hosts": "builder", "become": true,
		"gather_facts": true, "tasks": []task{t}}})
	if err != nil {
		return "", err
	}
	return filepath.Join(inv.dir, "role.yml"), inv.file("role.yml", data)
}
