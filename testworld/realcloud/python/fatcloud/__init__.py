"""The real-cloud tier's own driver code (see docs/lab.md, "Real OpenStack").

Real Nova, Cinder and Neutron run with these small drivers because the
machine has no hypervisor, no block storage and no switch:

- nova_driver.SnapshotFakeDriver: Nova's FakeDriver that uploads bytes
  when asked for a snapshot (FakeDriver leaves the image queued) and fails
  a spawn on request.
- cinder_driver.FileVolumeDriver: volumes are sparse files.
- neutron_mech.BindAllMechanismDriver: binds every port, with no agent.
"""
