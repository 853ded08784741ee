package appliance

// Composition is, for tests, the ansible command line and environment a
// run against t uses (without the playbook); cleanup removes its files.
func (s *Site) Composition(t Target) (args, env []string, cleanup func(), err error) {
	inv, err := s.prepare(t)
	if err != nil {
		return nil, nil, nil, err
	}
	return inv.args, inv.env, inv.close, nil
}

// ResolvePlaybook is resolvePlaybook, for tests.
var ResolvePlaybook = resolvePlaybook

// DecodeResult is decodeResult, for tests.
var DecodeResult = decodeResult

// WithoutMissingRoles is withoutMissingRoles, for tests.
func (s *Site) WithoutMissingRoles(req Request) (Request, map[string]string, error) {
	return s.withoutMissingRoles(req)
}

// ReadTaskPackages is readTaskPackages, for tests, with the roles it
// found missing.
func (s *Site) ReadTaskPackages(ref TaskRef) (TaskPackages, map[string]string, error) {
	missing := map[string]string{}
	tp, err := s.readTaskPackages(ref, missing)
	return tp, missing, err
}
