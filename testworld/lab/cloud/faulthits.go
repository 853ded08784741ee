package cloud

// FaultHits returns, for each rule of the last SetFaults in order, how
// often it has applied: HTTP answers (or delays) injected, resources
// failed. Tests use it to show a probabilistic fault really fired.
func (c *Cloud) FaultHits() []int {
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	hits := make([]int, len(c.faults))
	for i, f := range c.faults {
		hits[i] = f.hits
	}
	return hits
}
