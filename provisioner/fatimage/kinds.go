package fatimage

import (
	"context"
	"fmt"
	"slices"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
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
	// has reports whether the plan holds any item.
	has(p *plan) bool
	// script is what puts the plan's items in place on the VM, and the
	// body name of the kind's shell.
	script(s *state) (content.Script, string, error)
	// register makes the kind's shell a body scriptBody finds.
	register()
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

func (k kindOf[T]) register() { kindShells[kindBody(k.kind)] = k.kind.Shell() }

func (k kindOf[T]) has(p *plan) bool { return len(*k.items(&p.ContentOptions)) > 0 }

func (k kindOf[T]) script(s *state) (content.Script, string, error) {
	cs, err := k.kind.Install(content.Env{WorkDir: s.workDir}, *k.items(&s.plan.ContentOptions))
	return cs, kindBody(k.kind), err
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
		for _, f := range cs.Staged {
			files = append(files, staged{f.Name, f.Data})
		}
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

// addCalls adds cs's calls to sc.
func addCalls(sc *vmScript, cs content.Script) *vmScript {
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

// kindsStep is one step, one script, for several content kinds that
// belong together (the system settings), in the order given; say is its
// headline.
func kindsStep(name, say string, ks ...contentKind) step {
	for _, k := range ks {
		k.register()
	}
	has := func(s *state) bool { return slices.ContainsFunc(ks, func(k contentKind) bool { return k.has(s.plan) }) }
	return step{name: name, kinds: ks, when: has, run: func(ctx context.Context, s *state) error {
		return installKinds(ctx, s, say, ks)
	}}
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
