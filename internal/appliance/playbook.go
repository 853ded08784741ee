package appliance

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// engineTag marks the resolution's own tasks; the run selects only them
// (--tags), so imported roles' tasks never run. A role task tagged
// `always` would still be selected: the import's `when: false` skips it.
const engineTag = "fatimage_engine"

type play map[string]any
type task map[string]any

func engineTask(t task) task {
	t["tags"] = []string{engineTag}
	return t
}

// readExpr templates the variable arg names (a quoted name, or item);
// as text, the `string` filter is Python's str, which a template's `{{
// name }}` writes, where the value alone may come back as a number (an
// Ansible keeping native types) that JSON decoding then reshapes.
func readExpr(arg string, text bool) string {
	if text {
		return "{{ lookup('ansible.builtin.vars', " + arg + ") | string }}"
	}
	return "{{ lookup('ansible.builtin.vars', " + arg + ") }}"
}

// readTask registers a variable's templated value (or Ansible's error),
// as text or not, under reg. no_log keeps the value out of Ansible's
// output; the registered result keeps it.
func readTask(name, reg string, text bool) task {
	label := "read " + name
	if text {
		label += " as text"
	}
	return engineTask(task{
		"name":                  label,
		"ansible.builtin.debug": map[string]any{"msg": readExpr("'"+name+"'", text)},
		"register":              reg, "ignore_errors": true, "no_log": true,
	})
}

// conditionTask registers under reg whether condition c holds (skipped:
// it does not; failed: Ansible could not evaluate it).
func conditionTask(c, reg string) task {
	return engineTask(task{"name": "condition: " + c, "ansible.builtin.debug": map[string]any{"msg": "holds"},
		"when": c, "register": reg, "ignore_errors": true, "no_log": true})
}

// includeVarsTask includes the first of files found, as a role's
// include_vars task with_first_found does (none found: nothing, where
// the role's own task would fail). The files are templated by the
// lookup; with_first_found's skip is not honoured by every Ansible.
func includeVarsTask(files []string) task {
	return engineTask(task{"name": "the role's vars files", "ansible.builtin.include_vars": "{{ item }}",
		"loop": "{{ query('ansible.builtin.first_found', " + engineTag + "_vars_files, errors='ignore') }}",
		"vars": map[string]any{engineTag + "_vars_files": files}})
}

// readAll reads names (as text: Python's str of each) in one looped
// task registered under reg, a task costing what a hundred do not; one
// value that Ansible cannot template fails the whole loop, so its rescue
// reads each name in a task of its own (registered under reg_<j>). It
// returns the block and the expression of the registered list: the
// loop's results, or the single tasks' when the loop failed.
func readAll(names []string, reg string, text bool) (task, string) {
	loop := engineTask(task{"name": fmt.Sprintf("read %d variables", len(names)), "ansible.builtin.debug": map[string]any{"msg": readExpr("item", text)},
		"loop": names, "register": reg, "no_log": true})
	var rescue []task
	var single []string
	for j, name := range names {
		single = append(single, fmt.Sprintf("%s_%d", reg, j))
		rescue = append(rescue, readTask(name, single[j], text))
	}
	block := engineTask(task{"block": []task{loop}, "rescue": rescue})
	// Jinja's inline if evaluates only the branch it takes
	return block, fmt.Sprintf("(%s.results if %s is succeeded else [%s])", reg, reg, strings.Join(single, ", "))
}

// queryPlay is the tasks of query i's play, and the expressions of the
// lists of what they register: its variables, conditions and texts.
func queryPlay(i int, q Query) ([]task, [3]string) {
	var tasks []task
	if q.Role != "" {
		tasks = append(tasks, task{"ansible.builtin.import_role": map[string]any{"name": q.Role}, "when": false})
	}
	if len(q.VarsFiles) > 0 {
		tasks = append(tasks, includeVarsTask(q.VarsFiles))
	}
	lists := [3]string{"[]", "[]", "[]"}
	if len(q.Vars) > 0 {
		var block task
		block, lists[0] = readAll(q.Vars, fmt.Sprintf("%s_q%d", engineTag, i), false)
		tasks = append(tasks, block)
	}
	var conds []string
	for j, c := range q.Conditions {
		conds = append(conds, fmt.Sprintf("%s_q%d_c%d", engineTag, i, j))
		tasks = append(tasks, conditionTask(c, conds[j]))
	}
	lists[1] = "[" + strings.Join(conds, ", ") + "]"
	if len(q.Texts) > 0 {
		var block task
		block, lists[2] = readAll(q.Texts, fmt.Sprintf("%s_q%d_t", engineTag, i), true)
		tasks = append(tasks, block)
	}
	return tasks, lists
}

// resolvePlaybook is the resolution's playbook: facts (gathered as the
// appliance's install plays gather them, with become), one play per
// query scope, one for host patterns, conditions and expressions, and a
// last play writing everything registered to out, on the machine running
// ansible.
func resolvePlaybook(req Request, out string) ([]byte, error) {
	builder := func(name string, tasks ...task) play {
		return play{"name": name, "hosts": "builder", "gather_facts": false, "tasks": tasks}
	}
	facts := builder("fatimage: facts", engineTask(task{"ansible.builtin.setup": map[string]any{}}))
	facts["become"] = true
	plays := []play{facts}
	var queries, qconds, qtexts []string
	var last []play
	for i, q := range req.Queries {
		tasks, regs := queryPlay(i, q)
		p := builder(fmt.Sprintf("fatimage: variables (role %q)", q.Role), tasks...)
		if len(q.VarsFiles) > 0 {
			// included variables stay the host's for the rest of the run
			// (as the role's do in the appliance's): after the other scopes
			last = append(last, p)
		} else {
			plays = append(plays, p)
		}
		queries = append(queries, regs[0])
		qconds = append(qconds, regs[1])
		qtexts = append(qtexts, regs[2])
	}
	plays = append(plays, last...)
	var conds []string
	var ctasks []task
	for i, c := range req.Conditions {
		reg := fmt.Sprintf("%s_c%d", engineTag, i)
		ctasks = append(ctasks, conditionTask(c, reg))
		conds = append(conds, reg)
	}
	var exprs []string
	for i, e := range req.Expressions {
		reg := fmt.Sprintf("%s_e%d", engineTag, i)
		ctasks = append(ctasks, engineTask(task{"name": "expression: " + e, "ansible.builtin.debug": map[string]any{"msg": e},
			"register": reg, "ignore_errors": true, "no_log": true}))
		exprs = append(exprs, reg)
	}
	pats := "{}"
	if len(req.Patterns) > 0 {
		// The lookup resolves a pattern as a play's hosts do (the same
		// inventory call), in one task rather than one play per pattern.
		ctasks = append(ctasks, engineTask(task{"name": "host patterns",
			"ansible.builtin.debug": map[string]any{
				"msg": "{{ inventory_hostname in query('ansible.builtin.inventory_hostnames', item) }}"},
			"loop": req.Patterns, "register": engineTag + "_patterns", "ignore_errors": true}))
		pats = engineTag + "_patterns"
	}
	if len(ctasks) > 0 {
		plays = append(plays, builder("fatimage: host patterns, conditions and expressions", ctasks...))
	}
	content := fmt.Sprintf("{{ {'q': [%s], 'qc': [%s], 'qt': [%s], 'c': [%s], 'e': [%s], 'p': %s, 'groups': group_names} | to_json }}",
		strings.Join(queries, ", "), strings.Join(qconds, ", "), strings.Join(qtexts, ", "), strings.Join(conds, ", "), strings.Join(exprs, ", "), pats)
	plays = append(plays, builder("fatimage: write", engineTask(task{
		"ansible.builtin.copy": map[string]any{"content": content, "dest": out, "mode": "0600"},
		"delegate_to":          "localhost",
		// whatever the inventory says of connections, this runs here
		"vars": map[string]any{"ansible_connection": "local", "ansible_become": false,
			"ansible_python_interpreter": "{{ ansible_playbook_python }}"},
		"no_log": true,
	})))
	return yaml.Marshal(plays)
}
