"""The real-cloud tier's own driver code (see docs/lab.md, "Real OpenStack").

Real Nova and Cinder run with these small drivers because the machine has
no hypervisor and no block storage (Neutron runs its own agents):

- nova_driver.SnapshotFakeDriver: Nova's FakeDriver that uploads bytes
  when asked for a snapshot (FakeDriver leaves the image queued) and fails
  a spawn on request.
- cinder_driver.FileVolumeDriver: volumes are sparse files.
- guest_driver.GuestDriver: SnapshotFakeDriver whose servers from a lab
  disk are the guest host's VMs.
"""
