package openstack

import "errors"

// isTerminal reports whether err came from a resource's error state. Only
// tests ask: the builder itself stops on any wait error.
func isTerminal(err error) bool {
	var t *errTerminal
	return errors.As(err, &t)
}
