package fatimage

import "github.com/stackhpc/packer-plugin-fatimage/internal/content/system"

// The system settings are content kinds of internal/content/system,
// installed by the step "system"; image.json records what they wrote.

// hasSystem reports whether any system setting is configured.
func (c *ContentOptions) hasSystem() bool {
	return len(c.SystemdUnits)+len(c.Sysctls)+len(c.ModprobeBlacklists)+len(c.Tmpfiles)+len(c.Limits)+len(c.KernelArgs) > 0
}

// systemFiles are every file the system settings write, in order.
func systemFiles(c *ContentOptions) []system.File {
	return system.Files(c.SystemdUnits, c.Sysctls, c.ModprobeBlacklists, c.Tmpfiles, c.Limits)
}

func (s *state) imageSystemRecord() *imageSystem {
	p := s.plan
	if !p.hasSystem() {
		return nil
	}
	r := &imageSystem{}
	for _, u := range p.SystemdUnits {
		if r.Units == nil {
			r.Units = map[string]string{}
		}
		r.Units[u.Name] = u.UnitState()
	}
	for _, f := range systemFiles(&p.ContentOptions) {
		r.Files = append(r.Files, f.Path)
	}
	r.KernelArgs = p.KernelArgs
	return r
}
