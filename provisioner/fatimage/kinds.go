package fatimage

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/dashboards"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/downloads"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/keys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/python"
)

// contentKind is a content kind (internal/content) as the provisioner
// drives it: the kind's items are the ContentOptions field items picks,
// in the template, in a group's content and merged in the plan. A step
// of the table with a kind checks, merges and installs through it.
type contentKind interface {
	option() string
	// check validates the items of o (the template's or a group's).
	check(o *ContentOptions) []error
	// merge puts the groups' items and the template's into the plan.
	merge(p *plan, groups []groupItems, errs *[]error)
	// adopt puts into o, a group's items, the template's item of the
	// same identity in place of each it replaces, for the group's check
	// (the merge leaves the group's out); it returns the identities of
	// o's items and the indices of those replaced.
	adopt(o, template *ContentOptions) (ids []string, replaced []int)
	// has reports whether the plan holds any item.
	has(p *plan) bool
	// script is what puts the plan's items in place on the VM, and the
	// body name of the kind's shell.
	script(s *state) (content.Script, string, error)
	// register makes the kind's shell a body scriptBody finds.
	register()
	// fetch is the fetch of the items of o, with the kind's body name;
	// ok is false for a kind that fetches nothing (no content.Fetcher).
	fetch(ctx context.Context, env content.Env, o *ContentOptions) (f content.Fetch, body string, ok bool, err error)
	// record is the kind's entries in image.json's content
	// (content.Recorder), by key; none for a kind without one.
	record(env content.Env, p *plan) (map[string]any, error)
}

// kindOf adapts a content.Kind over T to contentKind.
type kindOf[T any] struct {
	kind  content.Kind[T]
	items func(*ContentOptions) *[]T
}

// newKind is the entry of a content kind in the step table: the kind and
// its field of ContentOptions.
func newKind[T any](k content.Kind[T], items func(*ContentOptions) *[]T) contentKind {
	return kindOf[T]{k, items}
}

func (k kindOf[T]) option() string { return k.kind.Option() }

func (k kindOf[T]) check(o *ContentOptions) []error { return k.kind.Validate(*k.items(o)) }

func (k kindOf[T]) merge(p *plan, groups []groupItems, errs *[]error) {
	mergeKind(p, groups, k.kind.Option(), k.kind.Option(), k.items, k.kind.ID, errs)
}

func (k kindOf[T]) adopt(o, template *ContentOptions) (ids []string, replaced []int) {
	byID := map[string]T{}
	for _, t := range *k.items(template) {
		byID[k.kind.ID(t)] = t
	}
	items := slices.Clone(*k.items(o))
	for i, it := range items {
		ids = append(ids, k.kind.ID(it))
		if t, ok := byID[ids[i]]; ok {
			items[i], replaced = t, append(replaced, i)
		}
	}
	*k.items(o) = items
	return ids, replaced
}

func (k kindOf[T]) register() { kindShells[kindBody(k.kind)] = k.kind.Shell() }

func (k kindOf[T]) has(p *plan) bool { return len(*k.items(&p.ContentOptions)) > 0 }

func (k kindOf[T]) script(s *state) (content.Script, string, error) {
	cs, err := k.kind.Install(s.kindEnv(k.option()), *k.items(&s.plan.ContentOptions))
	return cs, kindBody(k.kind), err
}

func (k kindOf[T]) fetch(ctx context.Context, env content.Env, o *ContentOptions) (content.Fetch, string, bool, error) {
	f, ok := k.kind.(content.Fetcher[T])
	if !ok {
		return content.Fetch{}, "", false, nil
	}
	cf, err := f.Fetch(ctx, env, *k.items(o))
	return cf, kindBody(k.kind), true, err
}

func (k kindOf[T]) record(env content.Env, p *plan) (map[string]any, error) {
	if r, ok := k.kind.(content.Recorder[T]); ok {
		return r.Record(env, *k.items(&p.ContentOptions))
	}
	return nil, nil
}

// kindEnv is what the kind of option knows of this run.
func (s *state) kindEnv(option string) content.Env {
	return content.Env{WorkDir: s.workDir, SecretDir: secretDir(s.workDir), Source: s.cfg.contentSource(), Options: s.cfg.kindOptions(),
		Registries: s.cfg.ContainerRegistries, Say: func(l string) { s.ui.Say("fatimage: " + l) },
		Fetched: s.content.fetched[option], Installed: s.content.installed[option]}
}

// kindOptions are the options the kinds read besides their items.
func (c *Config) kindOptions() map[string]string {
	return map[string]string{dashboards.URLOption: c.grafanaDashboardsURL()}
}

// fetchKind adds the fetch of k's items to sc: their local files and
// the host's uploads put in the work dir, their URLs staged there and
// checked, then the kind's calls. before, when set, sees the fetch
// before anything is fetched (to say its headline). It returns the
// fetch, nil for a kind that fetches nothing; fetched takes what the
// script printed.
func (s *state) fetchKind(ctx context.Context, sc *vmScript, k contentKind, before func(content.Fetch)) (*content.Fetch, error) {
	f, body, ok, err := k.fetch(ctx, s.kindEnv(k.option()), &s.plan.ContentOptions)
	if !ok || err != nil {
		return nil, err
	}
	if before != nil {
		before(f)
	}
	if err := s.uploadAll(f.Uploads); err != nil {
		return nil, err
	}
	if err := s.stage(sc, stagedFiles(f.Script.Staged)...); err != nil {
		return nil, fmt.Errorf("%s: %w", k.option(), err)
	}
	if err := s.stageFetches(ctx, sc, s.cfg.contentSource(), f.URLs); err != nil {
		return nil, err
	}
	if len(f.Script.Calls) > 0 {
		sc.use(body).use(f.Script.Bodies...)
		addCalls(sc, f.Script)
	}
	return &f, nil
}

// fetched keeps what k's fetch (nil: none) found, the host's reports
// and what its script printed (out), checks it and says the fetch's
// warnings on it.
func (s *state) fetched(k contentKind, f *content.Fetch, out string) error {
	if f == nil {
		f = &content.Fetch{}
	}
	out = f.Reports + out
	s.content.report(&s.content.fetched, k, out)
	if f.Check != nil {
		if err := f.Check(out); err != nil {
			return err
		}
	}
	if f.Warn != nil {
		for _, w := range f.Warn(out) {
			s.say("WARNING: " + w)
		}
	}
	return nil
}

// uploadAll uploads the host's files of a fetch, removing the temporary
// ones, uploaded or not.
func (s *state) uploadAll(us []content.Upload) error {
	defer content.RemoveUploads(us)
	for _, u := range us {
		name := u.Name
		if name == "" {
			name = path.Base(u.Dst)
		}
		if err := s.uploadFile(u.What, u.Path, name, u.Dst); err != nil {
			return err
		}
	}
	return nil
}

// kindFetchPlan is the fetch of k's items in the plan, without the run
// (its warnings and owners).
func kindFetchPlan(k contentKind, o *ContentOptions) content.Fetch {
	f, _, _, _ := k.fetch(context.Background(), content.Env{}, o)
	return f
}

// recordKind keeps k's record for image.json, failing when the scripts
// did not report what it needs.
func (s *state) recordKind(k contentKind) error {
	r, err := k.record(s.kindEnv(k.option()), s.plan)
	if err != nil {
		return err
	}
	if s.content.records == nil {
		s.content.records = map[string]any{}
	}
	for key, v := range r {
		s.content.records[key] = v
	}
	return nil
}

// installKinds runs the scripts of the kinds of ks holding items as one
// script on the VM, their files staged in one upload; say is the
// headline, the kind's own when empty. Kinds sharing one shell (the
// system settings) include it once.
func installKinds(ctx context.Context, s *state, say string, ks []contentKind) error {
	sc := newScript()
	var files []staged
	var scripts []content.Script
	for _, k := range ks {
		if !k.has(s.plan) {
			continue
		}
		cs, body, err := k.script(s)
		if err != nil {
			return err
		}
		if say == "" {
			say = cs.Say
		}
		if !slices.ContainsFunc(sc.bodies, func(b string) bool { return scriptBody(b) == scriptBody(body) }) {
			sc.use(body)
		}
		sc.use(cs.Bodies...)
		files = append(files, stagedFiles(cs.Staged)...)
		scripts = append(scripts, cs)
	}
	s.say(say)
	// the staged files are unpacked before any call uses them
	if err := s.stage(sc, files...); err != nil {
		return fmt.Errorf("%s: %w", ks[0].option(), err)
	}
	for _, cs := range scripts {
		addCalls(sc, cs)
	}
	_, err := s.runScript(ctx, sc)
	return err
}

// kindShells are the content kinds' own scripts by body name
// ("kind-<option>"), which scriptBody looks up like the embedded ones;
// kindStep fills it as the step table is made.
var kindShells = map[string]string{}

// kindScript is a kind's script without staged files: the kind's shell,
// the bodies it names and its calls.
func kindScript[T any](k content.Kind[T], cs content.Script) *vmScript {
	return addCalls(newScript(append([]string{kindBody(k)}, cs.Bodies...)...), cs)
}

// addCalls adds cs's secrets and calls to sc.
func addCalls(sc *vmScript, cs content.Script) *vmScript {
	for _, f := range cs.Secrets {
		sc.addSecret(staged{f.Name, f.Data})
	}
	for _, c := range cs.Calls {
		sc.call(c[0], c[1:]...)
	}
	return sc
}

// kindStep is the step of a content kind: it installs the plan's items,
// when there are any.
func kindStep(name string, k contentKind) step {
	return kindsStep(name, "", k)
}

// fetchStep is the step of a kind fetched and checked on its own before
// any package work and installed by another step (rpm_urls, by the
// packages step's transaction): it says the fetch's headline and
// warnings, runs its script, checks the reports and keeps the record.
func fetchStep(name string, k contentKind) step {
	registered(k)
	return step{name: name, kinds: []contentKind{k}, when: func(s *state) bool { return k.has(s.plan) }, run: func(ctx context.Context, s *state) error {
		sc := newScript("content")
		f, err := s.fetchKind(ctx, sc, k, func(f content.Fetch) {
			if f.Script.Say != "" {
				s.say(f.Script.Say)
			}
			for _, w := range f.Warnings {
				s.say("WARNING: " + w)
			}
		})
		if err != nil {
			return err
		}
		out := ""
		if !sc.empty() {
			// the host may have done it all (containers' archives)
			if out, err = s.runScript(ctx, sc); err != nil {
				return err
			}
		}
		if err := s.fetched(k, f, out); err != nil {
			return err
		}
		return s.recordKind(k)
	}}
}

// installStep is the install of a kind that a fetchStep before lists
// (and so checks and merges): its items put in place after the packages.
func installStep(name string, k contentKind) step {
	return step{name: name, when: func(s *state) bool { return k.has(s.plan) }, run: func(ctx context.Context, s *state) error {
		return installKinds(ctx, s, "", []contentKind{k})
	}}
}

// kindsStep is one step, one script, for several content kinds that
// belong together (the system settings), in the order given; say is its
// headline.
func kindsStep(name, say string, ks ...contentKind) step {
	registered(ks...)
	has := func(s *state) bool { return slices.ContainsFunc(ks, func(k contentKind) bool { return k.has(s.plan) }) }
	return step{name: name, kinds: ks, when: has, run: func(ctx context.Context, s *state) error {
		return installKinds(ctx, s, say, ks)
	}}
}

// registered is ks, their shells registered (the kinds of a step of
// its own making, rather than kindStep's).
func registered(ks ...contentKind) []contentKind {
	for _, k := range ks {
		k.register()
	}
	return ks
}

// The kinds of the content steps: fetched in content-fetch and
// installed in content, one script each, in this order.
var (
	kindDownloads    = newKind(downloads.Kind{}, func(o *ContentOptions) *[]downloads.Download { return &o.Downloads })
	kindGit          = newKind(git.Kind{}, func(o *ContentOptions) *[]git.GitCheckout { return &o.GitCheckouts })
	kindPython       = newKind(python.Kind{}, func(o *ContentOptions) *[]python.PythonEnv { return &o.PythonEnvs })
	kindDashboards   = newKind(dashboards.Kind{}, func(o *ContentOptions) *[]dashboards.GrafanaDashboard { return &o.GrafanaDashboards })
	contentStepKinds = []contentKind{kindDownloads, kindGit, kindPython, kindDashboards}
	// kindKeys is installed by the repos step, with the repositories'
	// built-in keys (keys.Script).
	kindKeys = newKind(keys.Kind{}, func(o *ContentOptions) *[]keys.GPGKey { return &o.GPGKeys })
)

// installKind adds the install of k's items to sc: its files staged,
// its shell and its calls.
func installKind(s *state, sc *vmScript, k contentKind) error {
	cs, body, err := k.script(s)
	if err != nil {
		return err
	}
	if err := s.stage(sc, stagedFiles(cs.Staged)...); err != nil {
		return fmt.Errorf("%s: %w", k.option(), err)
	}
	addCalls(sc.use(body).use(cs.Bodies...), cs)
	return nil
}

// stagedFiles are a kind's files for s.stage.
func stagedFiles(fs []content.Staged) []staged {
	var out []staged
	for _, f := range fs {
		out = append(out, staged{f.Name, f.Data})
	}
	return out
}

// kindBody is the body name of k's shell.
func kindBody[T any](k content.Kind[T]) string { return "kind-" + k.Option() }

// contentKinds are the kinds of the step table, in its order.
func contentKinds() []contentKind {
	var out []contentKind
	for _, st := range steps {
		out = append(out, st.kinds...)
	}
	return out
}
