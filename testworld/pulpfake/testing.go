package pulpfake

import "testing"

// StartT starts a server for a test, serving every timestamp below every
// path behind guard (nil: open), and closes it when the test ends.
func StartT(t testing.TB, opts Options, guard *Guard, paths []string, timestamps ...string) *Server {
	t.Helper()
	s := New(opts)
	for _, p := range paths {
		for _, ts := range timestamps {
			s.AddDistribution(Distribution{BasePath: p + "/" + ts, Guard: guard})
		}
	}
	if err := s.Start(); err != nil {
		t.Fatalf("pulpfake: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
