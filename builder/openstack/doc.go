// Package openstack is the `fatimage-openstack` builder: it accepts every
// option of the official Packer OpenStack builder and builds an image from
// a server (or its boot volume), with cancellable, bounded waits, cleanup
// of everything it creates, and no network call in Prepare.
package openstack
