// Package provtest holds the fatimage provisioner's tests against lab VMs:
// the provisioner runs in-process over the Packer SDK's real SSH
// communicator. They need the lab (root); the provisioner's own package
// keeps the unit tests, which do not.
package provtest
