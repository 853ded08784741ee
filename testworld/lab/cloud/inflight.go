package cloud

// InFlight is the number of API requests the cloud is serving now (held
// by a latency fault included). A test that interrupted a client waits
// for 0 before checking for leaks, so a create still being served cannot
// land after the check.
func (c *Cloud) InFlight() int { return int(c.inflight.Load()) }
