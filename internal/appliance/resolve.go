package appliance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Query asks for variables in one scope.
type Query struct {
	// Role, when set, is imported into the play that reads the variables
	// (its tasks never run), so its defaults and vars are in scope as they
	// are for that role's own tasks in fatimage.yml. Empty: no role's.
	Role string
	Vars []string
	// Conditions are task conditions (`when`) evaluated in the same
	// scope, for what a role decides from its own defaults (whether
	// osc.ood installs mod_auth_openidc).
	Conditions []string
	// VarsFiles are the files in Role's vars/ directory that a task of
	// the role includes (include_vars) before the task that reads the
	// variables, the first of them found, each templated by Ansible with
	// the VM's facts (osc.ood's "{{ ansible_distribution }}/{{
	// ansible_distribution_major_version }}.yml"): its variables are read
	// at include_vars precedence, above the site's group_vars, as the
	// role's own tasks see them. Not for a collection's role.
	VarsFiles []string
	// Texts are variables read as a role's template prints them (`{{
	// name }}` in a template: Python's str of the value), for lines a
	// template writes: a float keeps its form (100.0, which the value's
	// JSON, once decoded, would give as 100).
	Texts []string
}

// Request is what one resolution asks of the site's Ansible.
type Request struct {
	Queries []Query
	// Patterns are play host patterns to match the build host against.
	Patterns []string
	// Conditions are task conditions (`when`) to evaluate for the build
	// host, in the scope of no role.
	Conditions []string
	// Expressions are templated strings (such as a role's tasks_from) to
	// template for the build host, in the scope of no role.
	Expressions []string
	// Tasks are task files whose package lists are read as written (no
	// Ansible: the values are literal).
	Tasks []TaskRef
}

// Value is one variable's value as Ansible templated it.
type Value struct {
	// Defined is false when no variable of that name exists.
	Defined bool
	// Value is the templated value (JSON types), when Error is "".
	Value any
	// Keys are a mapping value's keys in the site's Ansible's order (a
	// role's template iterating `.items()` writes them so); Value's Go
	// map has none.
	Keys []string
	// Error is Ansible's message when the value could not be templated
	// (for example it uses a variable defined only on a real cluster).
	Error string
}

// Truth is a condition's outcome for the build host.
type Truth struct {
	Holds bool
	Error string
}

// Result is one resolution.
type Result struct {
	// Commit is the checkout's git commit ("" when it is not a work tree,
	// CommitError then says why).
	Commit, CommitError string
	Environment         string
	// Duration is how long the resolution took, ansible-playbook included.
	Duration time.Duration
	// Groups are the build host's groups (group_names).
	Groups []string
	// Values maps a query's role ("" for none) to its variables' values,
	// and RoleConditions to its conditions' outcomes.
	Values         map[string]map[string]Value
	RoleConditions map[string]map[string]Truth
	// Texts maps a query's role to its Texts, each a string Value.
	Texts map[string]map[string]Value
	// Patterns says which host patterns match the build host.
	Patterns    map[string]bool
	Conditions  map[string]Truth
	Expressions map[string]Value
	// MissingRoles are the queries' and tasks' roles the site does not
	// have, each with where it was looked for: their queries were left
	// out, so that a build needing none of their values resolves the rest.
	MissingRoles map[string]string
	// Tasks are the requested task files' package lists (none for a
	// missing role's).
	Tasks map[TaskRef]TaskPackages
}

// RoleMissing is the error of a value or condition asked in a role's
// scope that the site lacks; nil when it has the role.
func (r *Result) RoleMissing(role string) error {
	if where, ok := r.MissingRoles[role]; ok {
		return fmt.Errorf("the role %s is not installed: the site's Ansible looks for it in %s", role, where)
	}
	return nil
}

var (
	varRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	roleRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
)

func (r Request) check() error {
	var errs []error
	for _, ref := range r.Tasks {
		errs = append(errs, ref.check())
	}
	for _, q := range r.Queries {
		if q.Role != "" && !roleRE.MatchString(q.Role) {
			errs = append(errs, fmt.Errorf("role %q: not a role name", q.Role))
		}
		for _, v := range slices.Concat(q.Vars, q.Texts) {
			if !varRE.MatchString(v) {
				errs = append(errs, fmt.Errorf("variable %q: not a variable name", v))
			}
		}
		for _, c := range q.Conditions {
			if strings.TrimSpace(c) == "" {
				errs = append(errs, fmt.Errorf("role %q: an empty condition", q.Role))
			}
		}
		if len(q.VarsFiles) > 0 && (q.Role == "" || strings.Count(q.Role, ".") == 2) {
			errs = append(errs, fmt.Errorf("role %q: vars files need a role that is not a collection's", q.Role))
		}
	}
	return errors.Join(errs...)
}

// withVarsPaths is req with each query's VarsFiles in its role's vars/
// directory (the role is installed: missing ones are left out before).
func (s *Site) withVarsPaths(req Request) (Request, error) {
	out := req
	out.Queries = slices.Clone(req.Queries)
	for i, q := range out.Queries {
		if len(q.VarsFiles) == 0 {
			continue
		}
		dir, err := s.FindRole(q.Role)
		if err != nil || dir == "" {
			return req, fmt.Errorf("role %s: its vars files: not found (%v)", q.Role, err)
		}
		var files []string
		for _, f := range q.VarsFiles {
			files = append(files, filepath.Join(dir, "vars", f))
		}
		out.Queries[i].VarsFiles = files
	}
	return out, nil
}

// Resolve gathers the build VM's facts and resolves the request with the
// site's ansible-playbook, once. Ansible's output goes to log (values
// never appear in it: every task that reads one is no_log). A value may be
// a secret of the site's (a repository password): callers must not log
// values they did not ask for by name.
func (s *Site) Resolve(ctx context.Context, t Target, req Request, log io.Writer) (*Result, error) {
	start := time.Now()
	if err := req.check(); err != nil {
		return nil, err
	}
	req, missing, err := s.withoutMissingRoles(req)
	if err != nil {
		return nil, err
	}
	if req, err = s.withVarsPaths(req); err != nil {
		return nil, err
	}
	inv, err := s.prepare(t)
	if err != nil {
		return nil, err
	}
	defer inv.close()
	out := filepath.Join(inv.dir, "values.json")
	book, err := resolvePlaybook(req, out)
	if err != nil {
		return nil, err
	}
	if err := inv.file("resolve.yml", book); err != nil {
		return nil, err
	}
	if err := inv.playbook(ctx, s, log, "--tags", engineTag, filepath.Join(inv.dir, "resolve.yml")); err != nil {
		return nil, fmt.Errorf("resolving the appliance's variables on %s: %w", t.Host, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("resolving the appliance's variables: ansible-playbook wrote no values: %w", err)
	}
	res, err := decodeResult(req, data)
	if err != nil {
		return nil, err
	}
	res.Tasks = map[TaskRef]TaskPackages{}
	for _, ref := range req.Tasks {
		tp, err := s.readTaskPackages(ref, missing)
		if err != nil {
			return nil, err
		}
		if _, gone := missing[ref.Role]; !gone {
			res.Tasks[ref] = tp
		}
	}
	res.Environment, res.MissingRoles = s.Environment, missing
	if res.Commit, err = s.Commit(ctx); err != nil {
		res.CommitError = err.Error()
	}
	res.Duration = time.Since(start)
	return res, nil
}

// Summary is the line a build prints: which checkout and environment
// were read, and what the resolution cost.
func (r *Result) Summary() string {
	commit := r.Commit
	if commit == "" {
		commit = "of unknown commit (not a git work tree)"
	} else if len(commit) > 12 {
		commit = commit[:12]
	}
	n, c := 0, len(r.Conditions)
	for _, vals := range r.Values {
		n += len(vals)
	}
	for _, texts := range r.Texts {
		n += len(texts)
	}
	for _, conds := range r.RoleConditions {
		c += len(conds)
	}
	return fmt.Sprintf("appliance %s, environment %s: %d variables, %d host patterns, %d conditions resolved on the build VM in %.1fs",
		commit, filepath.Base(r.Environment), n, len(r.Patterns), c, r.Duration.Seconds())
}

// taskResult is the part of a registered task result read here.
type taskResult struct {
	Failed  bool `json:"failed"`
	Skipped bool `json:"skipped"`
	Msg     any  `json:"msg"`
	// keys are a mapping Msg's keys, in the order Ansible wrote them.
	keys []string
}

func (r *taskResult) UnmarshalJSON(data []byte) error {
	var raw struct {
		Failed  bool            `json:"failed"`
		Skipped bool            `json:"skipped"`
		Msg     json.RawMessage `json:"msg"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	r.Failed, r.Skipped = raw.Failed, raw.Skipped
	if len(raw.Msg) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw.Msg, &r.Msg); err != nil {
		return err
	}
	var err error
	r.keys, err = objectKeys(raw.Msg)
	return err
}

// objectKeys are a JSON object's keys in order; nil for another value.
func objectKeys(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

type rawResult struct {
	Queries    [][]taskResult `json:"q"`
	QueryConds [][]taskResult `json:"qc"`
	QueryTexts [][]taskResult `json:"qt"`
	Conditions []taskResult   `json:"c"`
	Exprs      []taskResult   `json:"e"`
	Patterns   struct {
		Results []taskResult `json:"results"`
		Msg     any          `json:"msg"`
	} `json:"p"`
	Groups []string `json:"groups"`
}

func decodeResult(req Request, data []byte) (*Result, error) {
	var raw rawResult
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("resolving the appliance's variables: reading ansible's output: %w", err)
	}
	if len(raw.Patterns.Results) != len(req.Patterns) {
		return nil, fmt.Errorf("resolving the appliance's host patterns: %v", raw.Patterns.Msg)
	}
	if len(raw.Queries) != len(req.Queries) || len(raw.QueryConds) != len(req.Queries) || len(raw.QueryTexts) != len(req.Queries) ||
		len(raw.Conditions) != len(req.Conditions) ||
		len(raw.Exprs) != len(req.Expressions) {
		return nil, errors.New("resolving the appliance's variables: ansible's output does not match the request")
	}
	res := &Result{Groups: raw.Groups, Values: map[string]map[string]Value{}, RoleConditions: map[string]map[string]Truth{},
		Patterns: map[string]bool{}, Conditions: map[string]Truth{}, Expressions: map[string]Value{}, Texts: map[string]map[string]Value{}}
	for i, q := range req.Queries {
		if res.Values[q.Role] == nil {
			res.Values[q.Role] = map[string]Value{}
			res.RoleConditions[q.Role] = map[string]Truth{}
			res.Texts[q.Role] = map[string]Value{}
		}
		if len(raw.Queries[i]) != len(q.Vars) || len(raw.QueryConds[i]) != len(q.Conditions) || len(raw.QueryTexts[i]) != len(q.Texts) {
			return nil, errors.New("resolving the appliance's variables: ansible's output does not match the request")
		}
		for j, name := range q.Vars {
			res.Values[q.Role][name] = value(name, raw.Queries[i][j])
		}
		for j, c := range q.Conditions {
			res.RoleConditions[q.Role][c] = truth(raw.QueryConds[i][j])
		}
		for j, name := range q.Texts {
			res.Texts[q.Role][name] = value(name, raw.QueryTexts[i][j])
		}
	}
	for i, c := range req.Conditions {
		res.Conditions[c] = truth(raw.Conditions[i])
	}
	for i, e := range req.Expressions {
		res.Expressions[e] = value("", raw.Exprs[i])
	}
	for i, p := range req.Patterns {
		r := raw.Patterns.Results[i]
		res.Patterns[p] = !r.Failed && (r.Msg == true || r.Msg == "True")
	}
	return res, nil
}

func truth(r taskResult) Truth {
	if r.Failed {
		return Truth{Error: fmt.Sprint(r.Msg)}
	}
	return Truth{Holds: !r.Skipped}
}

func value(name string, r taskResult) Value {
	if !r.Failed {
		return Value{Defined: true, Value: r.Msg, Keys: r.keys}
	}
	msg := fmt.Sprint(r.Msg)
	if name != "" && strings.Contains(msg, "No variable found with this name: "+name) {
		return Value{}
	}
	// Ansible appends where in our playbook the task is: not the site's concern.
	msg, _, _ = strings.Cut(msg, "\n\nThe error appears to be in")
	return Value{Defined: true, Error: msg}
}

// withoutMissingRoles is req without the queries of roles the site has
// not installed (a role's import fails the whole playbook), and those
// roles with where they were looked for: a role in the roles paths, a
// collection's (namespace.collection.role) in the collections paths.
func (s *Site) withoutMissingRoles(req Request) (Request, map[string]string, error) {
	out := req
	out.Queries = nil
	missing := map[string]string{}
	for _, q := range req.Queries {
		if q.Role != "" {
			where, err := s.missingRole(q.Role)
			if err != nil {
				return req, nil, err
			}
			if where != "" {
				missing[q.Role] = where
				continue
			}
		}
		out.Queries = append(out.Queries, q)
	}
	return out, missing, nil
}

// missingRole says where role was looked for when the site has not
// installed it ("" when it has).
func (s *Site) missingRole(role string) (string, error) {
	if parts := strings.Split(role, "."); len(parts) == 3 {
		cfg, err := readPaths(s.config())
		if err != nil {
			return "", err
		}
		var dirs []string
		for _, d := range append(cfg["collections_path"], s.CollectionsPath...) {
			dirs = append(dirs, filepath.Join(d, "ansible_collections", parts[0], parts[1], "roles"))
			if st, err := os.Stat(filepath.Join(dirs[len(dirs)-1], parts[2])); err == nil && st.IsDir() {
				return "", nil
			}
		}
		return strings.Join(dirs, ", ") + " (the collections_path of " + s.config() + ", then appliance_collections_path)", nil
	}
	dir, err := s.FindRole(role)
	if err != nil || dir != "" {
		return "", err
	}
	paths, err := s.RolesSearchPath()
	if err != nil {
		return "", err
	}
	return strings.Join(paths, ", ") + " (the roles_path of " + s.config() + ", then appliance_roles_path)", nil
}
