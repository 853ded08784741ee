/*
Package cloud serves an OpenStack API double on loopback so that gophercloud
v2 (and so the packer builder) and the official openstack CLI run offline.

# Layout

One HTTP server, devstack-style path prefixes:

	/identity            Keystone v3      (/identity/v3, AuthURL)
	/compute/v2.1        Nova             (microversions 2.1 .. 2.79)
	/image               Glance v2        (/image/v2/...)
	/networking          Neutron v2.0     (/networking/v2.0/...)
	/volume/v3/{project} Cinder v3
	/_control/faults     PUT a JSON []Fault, GET the current list
	/_control/status     GET Status (live resources)
	/_control/calls      GET API calls by service
	/_control/<name>     any Options.Control handler (the lab adds "releases" and "ark")

Each service is its own type with its own state and lock: keystone
(identity.go), nova (compute.go), glance (image.go), neutron (network.go)
and cinder (volume.go); Cloud (cloud.go, http.go) routes requests and
holds what they share (options, background work, faults, call counts,
the state log). Below its version documents and authentication each
service routes by Go 1.22 method patterns ("GET
/image/v2/images/{id}"): a router (routes.go) per service, its table in
<service>_routes.go; patterns without a method give the double's 404 or
405 in the service's own shape for what a service does not take (HEAD
does not match GET routes). Faults (testworld/faultinject) wrap each
service's handler. What one service offers another lives in
<service>_<peer>.go files (network_nova.go, volume_nova.go,
image_peers.go) and works by id: no service touches another's records.

Locks are taken in one order, compute -> volume -> image -> network ->
identity: a service may call a later one with its own lock held, never an
earlier one. Where a later service must act on an earlier one (Neutron
moving a floating IP onto a running machine, Glance finishing a snapshot
of a server or an upload of a volume) it does so from a function run
after it released its lock. Faults, call counts and the state log have
leaf locks that never call out.

The token's catalog lists public, internal and admin endpoints for
Options.Region; the volume service is registered as "block-storage" and
"volumev3". All services except version documents require X-Auth-Token;
unknown or expired tokens get Keystone's 401 body and a WWW-Authenticate
header, so clients re-authenticate.

# Identity

POST /v3/auth/tokens with "password" (user by name+domain or id; project
scope by name+domain or id; unscoped requests get the user's project),
"application_credential" (id+secret, or name+secret+user) and "token".
GET/HEAD/DELETE /v3/auth/tokens, GET /v3/auth/projects, /v3/auth/catalog,
/v3/projects[/{id}], /v3/users/{id}, /v3/users/{id}/application_credentials,
/v3/domains, /v3/regions. A token carries its user's roles (default
member and reader; admin implies member implies reader). A User has a
default project and may have roles on OtherProjects, to which it can scope
(also by re-scoping a token); several users may share a project.

# Policy

Admin-only operations answer 403 to other tokens, as the services'
default policies do: GET /v3/projects (identity:list_projects; a user
lists its own with /v3/auth/projects), Nova's all_tenants listings,
Glance's publicize_image (visibility public), changing an image's owner
and a member status set by anyone but the member project, Cinder's
os-reset_status and os-force_delete, Nova's and Neutron's quota changes
(and reads of another project's quotas). Admins may also read and modify any
project's images.

# Compute

flavors (list, detail, get, os-extra_specs), os-keypairs (create, with or
without public_key: an ed25519 key is generated and private_key returned;
list, get, delete; 201/204 from 2.2, 200/202 before), servers (create, list,
detail with name regexp/status/image/flavor filters and limit/marker,
get, update name, delete, metadata, os-interface, os-volume_attachments,
os-security-groups), actions os-stop, os-start, reboot SOFT|HARD,
createImage (202, Location header always, body {"image_id"} from 2.45),
os-getConsoleOutput (length), forceDelete, addSecurityGroup,
removeSecurityGroup. os-availability-zone, limits.
A deleting server is still shown (task_state "deleting") until it is gone.
Server create validates flavor, image (active), key_name, networks
([{uuid|port|fixed_ip}], "auto", "none"; required from 2.37) and
block_device_mapping_v2 (boot_index 0, destination volume, source image or
volume). The flavor is embedded in servers from 2.47.

# Image

Version documents at /image/, /image/versions and /image/v2/. Images: list
(filters name, status, visibility, owner, id (also "in:"), tag (repeatable,
all must match), member_status, disk_format, container_format, protected,
and any other key as an extra-property filter; sort=k:dir,... or
sort_key/sort_dir; limit/marker with a "next" link), get, create, PATCH
(application/openstack-images-v2.1-json-patch, add/replace/remove),
delete (403 when protected, as Glance does), tags PUT/DELETE, members
(list/create/get/update/delete; only shared images take members), PUT/GET
file, PUT stage and POST import (web-download fetches the URI; glance-direct
uses staged data), GET /v2/info/import and /v2/info/stores.

Uploaded or imported data becomes a disk when the Hypervisor implements
DiskImporter, is kept as a file when it implements DiskUnpacker, and is
otherwise kept in memory; GET .../file serves it back. With a
DiskUnpacker, servers and volumes made from an image that has a file get
a disk unpacked from it (image_boot.go); data that is no bootable disk
fails the server (ERROR, Nova's ImageUnacceptable fault) or the volume.
Disk-backed images (AddImage with Disk, snapshots, volume uploads) in raw
or qcow2 get a real image file when the Hypervisor implements
DiskExporter: size, virtual_size, checksum and os_hash_value are computed
over it and GET .../file streams it. Without an exporter (or for other
formats) GET .../file answers 204 and the figures are synthetic (derived
from id, disk and Hypervisor.DiskSize). Snapshots of volume-backed servers
are zero-byte images naming a Cinder snapshot (see compute_bfv.go).

# Network

networks (list with name/id/status/router:external/shared filters, get):
"lab-net" (FixedCIDR) and external "public" (FloatingCIDR); subnets (list,
get); ports (create with fixed_ips, list with device_id/network_id/...
filters, get, update, delete); floatingips (create on the external network,
optional floating_ip_address; list with floating_ip_address/port_id/
floating_network_id filters; get; update port_id to associate
(Machine.AddFloatingIP) or null to disassociate (Machine.RemoveFloatingIP);
delete); security-groups (a "default" group per project, with Neutron's
four rules: egress IPv4/IPv6, ingress from the group; create, list, get,
update, delete: a new group gets the two egress rules) and
security-group-rules (create with Neutron's checks, list, get, delete).
A server's security_groups (names or ids) become the groups of the ports
Nova makes for it, and it shows its ports' groups; actions
addSecurityGroup and removeSecurityGroup change every port of it. A
machine boots with its first port's filter (MachineSpec.Firewall: the
IPv4 rules of its groups, a remote group as its members' fixed
addresses) and gets it again (FirewalledMachine.SetFirewall) whenever a
rule, a group, a port's groups or a server changes; extensions; empty
lists for routers and a few others.

# Volume

Version documents at /volume/ and /volume/v3/. volumes (create with size,
name, description, imageRef, source_volid, volume_type, availability_zone
"nova", metadata: creating -> available; get; list; detail; update; delete
-> deleting -> gone, 400 when in-use/attaching/uploading), actions
os-volume_upload_image (volume "uploading", new image queued -> saving ->
active, volume back to its previous status), os-set_bootable,
os-reset_status, os-extend. types (list, get, "default"). A boot volume is
"in-use" with an attachment while its server lives; delete_on_termination
volumes go with the server, others return to "available".

# Quotas

Per-project quotas as Nova and Neutron keep them (quota.go): Nova's
GET/PUT/DELETE /v2.1/os-quota-sets/{project} (and GET .../defaults) with
Nova's resources and defaults (instances 10, cores 20, ram 51200, ...;
the network proxies hidden from 2.36, injected files from 2.57), Neutron's
GET/PUT/DELETE /v2.0/quotas/{project} (and GET .../default; floatingip 50,
...). A member reads its own project's, only an admin reads another's,
sets or resets them (403 with the services' policy messages); Nova refuses
a limit below what is used unless "force", Neutron's DELETE of a project
with nothing set is 404. Enforced: a server create over instances, cores
or ram answers Nova's 403 "Quota exceeded for cores, instances, ram:
Requested ..." (the exceeded resources, sorted), after the request is
validated and before ports are made; a deleting server counts until it is
gone. A floating IP over floatingip answers Neutron's 409 OverQuota
"Quota exceeded for resources: ['floatingip']." before the network is
looked at. /v2.1/limits reports the quota. Other resources' limits are
stored and shown but not enforced.

# Faults

See Fault for the data-driven rules: HTTP faults (latency, status with
Retry-After, hang, probability, count) and resource faults (server ERROR or
stuck in BUILD, image killed, volume error or stuck in creating, machine
hard reset, slow SSH start).

# Differences from real OpenStack

  - Single region, single availability zone "nova"; quotas are enforced
    only for Nova's instances, cores and ram and Neutron's floatingip, and
    there are no per-user Nova quotas or Nova unified limits; policy is
    the admin/member split above, not a full oslo.policy engine (no
    reader-only restrictions, no custom policy files).
  - Only the boot volume of block_device_mapping_v2 is modelled.
  - Glance's delete of a protected image is 403 (as Glance does), not 409.
  - Security groups: IPv4 rules are enforced (by a Hypervisor whose
    machines are FirewalledMachines, the lab's VMs), IPv6 rules are kept
    only; no stateless groups, address groups or port_security_enabled
    false.
*/
package cloud
