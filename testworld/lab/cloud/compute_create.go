package cloud

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

type createServerBody struct {
	Server serverRequest `json:"server"`
}

type serverRequest struct {
	Name             string                  `json:"name"`
	ImageRef         string                  `json:"imageRef"`
	FlavorRef        string                  `json:"flavorRef"`
	Metadata         map[string]string       `json:"metadata"`
	UserData         string                  `json:"user_data"`
	Networks         json.RawMessage         `json:"networks"`
	SecurityGroups   []struct{ Name string } `json:"security_groups"`
	KeyName          string                  `json:"key_name"`
	AvailabilityZone string                  `json:"availability_zone"`
	ConfigDrive      any                     `json:"config_drive"`
	BDM              []blockDeviceRequest    `json:"block_device_mapping_v2"`
	MinCount         any                     `json:"min_count"`
	MaxCount         any                     `json:"max_count"`
}

type blockDeviceRequest struct {
	SourceType          string `json:"source_type"`
	DestinationType     string `json:"destination_type"`
	UUID                string `json:"uuid"`
	VolumeSize          any    `json:"volume_size"`
	DeleteOnTermination bool   `json:"delete_on_termination"`
	BootIndex           any    `json:"boot_index"`
}

func badRequest(msg string) *httpErr { return &httpErr{http.StatusBadRequest, msg} }

// createServer is POST /servers: the checks in Nova's order, then the
// server in BUILD and its build in the background.
func (nv *nova) createServer(w http.ResponseWriter, r *http.Request, t *token, mv microversion) {
	var b createServerBody
	if err := decodeBody(r, &b); err != nil {
		fail(w, SvcCompute, http.StatusBadRequest, "", err.Error())
		return
	}
	s, e := nv.admitServer(b.Server, t, mv)
	if e != nil {
		fail(w, SvcCompute, e.status, "", e.msg)
		return
	}
	resp := obj{"id": s.ID, "links": []obj{{"rel": "self", "href": nv.c.url + "/compute/v2.1/servers/" + s.ID}},
		"OS-DCF:diskConfig": "MANUAL", "adminPass": newHexID()[:12]}
	sgs := []obj{}
	for _, g := range s.SecurityGroups {
		sgs = append(sgs, obj{"name": g})
	}
	resp["security_groups"] = sgs
	writeJSON(w, http.StatusAccepted, obj{"server": resp})
}

// admitServer validates the request, takes the ports and the boot volume
// the server uses, registers it in BUILD and starts its build.
func (nv *nova) admitServer(bs serverRequest, t *token, mv microversion) (*server, *httpErr) {
	if strings.TrimSpace(bs.Name) == "" {
		return nil, badRequest("Invalid input for field/attribute name. Value: . '' is too short")
	}
	var userData []byte
	if bs.UserData != "" {
		var err error
		if userData, err = base64.StdEncoding.DecodeString(bs.UserData); err != nil {
			return nil, badRequest("Invalid input for field/attribute user_data. Value: ... is not a base64 string")
		}
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	fl := nv.flavor(bs.FlavorRef)
	if fl == nil {
		return nil, badRequest("Flavor " + bs.FlavorRef + " could not be found.")
	}
	if bs.KeyName != "" && nv.keypairs[t.user.ID+"/"+bs.KeyName] == nil {
		return nil, badRequest("Invalid key_name provided.")
	}
	now := time.Now()
	s := newServer(bs, fl, userData, t, now)
	bootVol, e := nv.planBoot(s, bs, fl, t, now)
	if e != nil {
		return nil, e
	}
	nets, e := nv.requestedNICs(bs.Networks, mv)
	if e != nil {
		return nil, e
	}
	// Nova checks the quota after validating the request, before it
	// makes ports or volumes.
	if e := nv.checkServerQuota(t.project.ID, fl); e != nil {
		return nil, e
	}
	if e := nv.attach(s, t, nets, bootVol); e != nil {
		return nil, e
	}
	nv.register(s, now)
	return s, nil
}

func newServer(bs serverRequest, fl *Flavor, userData []byte, t *token, now time.Time) *server {
	s := &server{ID: newUUID(), Name: bs.Name, Status: "BUILD", TaskState: "scheduling", VMState: "building", Power: novaPowerNoState,
		FlavorID: fl.ID, Meta: map[string]string{}, KeyName: bs.KeyName, UserData: userData, AZ: "nova",
		ConfigDrive: anyBool(bs.ConfigDrive), Created: now, Updated: now, ownPorts: map[string]bool{},
		UserID: t.user.ID, ProjectID: t.project.ID}
	for k, v := range bs.Metadata {
		s.Meta[k] = v
	}
	if bs.AvailabilityZone != "" {
		s.AZ = bs.AvailabilityZone
	}
	for _, g := range bs.SecurityGroups {
		s.SecurityGroups = append(s.SecurityGroups, g.Name)
	}
	if len(s.SecurityGroups) == 0 {
		s.SecurityGroups = []string{"default"}
	}
	return s
}

// planBoot decides what s boots from. It returns the new boot volume to
// register once the rest of the request is valid (nil for none).
func (nv *nova) planBoot(s *server, bs serverRequest, fl *Flavor, t *token, now time.Time) (*volume, *httpErr) {
	// Block devices: only a boot volume (boot_index 0, destination volume) is modelled.
	var bootVol *volume
	imageRef := bs.ImageRef
	for _, d := range bs.BDM {
		bi, _ := anyInt(d.BootIndex)
		if d.BootIndex == nil || bi != 0 {
			continue
		}
		switch {
		case d.DestinationType == "volume" && d.SourceType == "image":
			var e *httpErr
			if bootVol, e = nv.volumeFromImage(s, d, t, now); e != nil {
				return nil, e
			}
		case d.DestinationType == "volume" && d.SourceType == "volume":
			if e := nv.c.volume.checkBootable(d.UUID, t.project.ID); e != nil {
				return nil, badRequest(e.msg)
			}
			s.bootVol = d.UUID
		case d.SourceType == "image" && (d.DestinationType == "local" || d.DestinationType == ""):
			imageRef = d.UUID
			continue
		default:
			return nil, badRequest("Block Device Mapping is Invalid: unsupported source_type/destination_type " + d.SourceType + "/" + d.DestinationType)
		}
		s.Volumes = append(s.Volumes, attachedVol{ID: s.bootVol, DeleteOnTermination: d.DeleteOnTermination})
	}
	if s.bootVol != "" {
		return bootVol, nil
	}
	return nv.bootImage(s, imageRef, fl, t, now)
}

// volumeFromImage is a boot volume made from an image.
func (nv *nova) volumeFromImage(s *server, d blockDeviceRequest, t *token, now time.Time) (*volume, *httpErr) {
	img := nv.c.image.imageCopy(d.UUID)
	if img == nil || img.Status != "active" {
		return nil, badRequest("Image " + d.UUID + " could not be found.")
	}
	size, _ := anyInt(d.VolumeSize)
	if size <= 0 {
		return nil, badRequest("Images with destination_type 'volume' need to have a non-zero size specified")
	}
	if size < img.MinDisk {
		return nil, badRequest(fmt.Sprintf("Volume is smaller than the minimum size specified in image metadata. Volume size is %d bytes, minimum size is %d bytes.", size<<30, img.MinDisk<<30))
	}
	v := newVolume("", size, t, now)
	v.Status = "creating"
	v.ImageID = img.ID
	v.imageMeta = volumeImageMeta(img)
	v.Bootable = true
	s.bootVol, s.bootVolNew, s.bootImage = v.ID, true, img.ID
	return v, nil
}

// bootImage checks an image boot: a local disk from the image, or for a
// snapshot of a volume-backed server a new volume from the Cinder
// snapshot it names, as Nova does.
func (nv *nova) bootImage(s *server, ref string, fl *Flavor, t *token, now time.Time) (*volume, *httpErr) {
	img := nv.c.image.imageCopy(ref)
	if img == nil || img.Status != "active" {
		return nil, badRequest("Image " + ref + " could not be found.")
	}
	if m, ok := snapshotMapping(img); ok {
		if e := nv.c.volume.checkSnapshot(m.SnapshotID, t.project.ID, m.VolumeSize); e != nil {
			return nil, badRequest("Block Device Mapping is Invalid: " + e.msg)
		}
		v := newVolume("", m.VolumeSize, t, now)
		v.SnapshotID, v.Bootable = m.SnapshotID, true
		s.bootVol, s.bootVolNew, s.bootSnapshot = v.ID, true, m.SnapshotID
		s.Volumes = append(s.Volumes, attachedVol{ID: v.ID, DeleteOnTermination: m.DeleteOnTermination})
		return v, nil
	}
	if fl.Disk == 0 && !t.isAdmin() {
		// Nova's os_compute_api:servers:create:zero_disk_flavor, an admin rule.
		return nil, &httpErr{http.StatusForbidden, "Only volume-backed servers are allowed for flavors with zero disk."}
	}
	if need := max(int64(img.MinDisk)<<30, img.VirtualSize); fl.Disk > 0 && need > int64(fl.Disk)<<30 {
		return nil, badRequest(fmt.Sprintf("Flavor's disk is too small for requested image. Flavor disk is %d bytes, image is %d bytes.", int64(fl.Disk)<<30, need))
	}
	s.ImageID = img.ID
	return nil, nil
}

// requestedNICs reads "networks": "auto", "none" or a list; microversion
// 2.37 made it required.
func (nv *nova) requestedNICs(networks json.RawMessage, mv microversion) ([]nicRequest, *httpErr) {
	var nets []nicRequest
	var netStr string
	switch {
	case len(networks) > 0 && json.Unmarshal(networks, &netStr) == nil:
		if netStr != "auto" && netStr != "none" {
			return nil, badRequest("Invalid input for field/attribute networks.")
		}
	case len(networks) > 0:
		if err := json.Unmarshal(networks, &nets); err != nil {
			return nil, badRequest("Invalid input for field/attribute networks.")
		}
	case mv.atLeast(37):
		return nil, badRequest("Invalid input for field/attribute server. Value: ... 'networks' is a required property")
	default:
		netStr = "auto"
	}
	if netStr == "auto" {
		nets = append(nets, nicRequest{UUID: nv.c.network.defaultNetworkID()})
	}
	return nets, nil
}

// attach plugs the server's ports and takes its boot volume.
func (nv *nova) attach(s *server, t *token, nets []nicRequest, bootVol *volume) *httpErr {
	ports, own, e := nv.c.network.plugServer(s.ID, t.project.ID, nets, s.SecurityGroups)
	if e != nil {
		return e
	}
	s.Ports, s.ownPorts = ports, own
	if bootVol != nil {
		bootVol.ServerID = s.ID
		nv.c.volume.add(bootVol)
	} else if s.bootVol != "" {
		if e := nv.c.volume.reserve(s.bootVol, s.ID, true); e != nil {
			nv.c.network.unplugServer(s.Ports, s.ownPorts)
			return badRequest(e.msg)
		}
	}
	return nil
}

// register makes s visible, with the faults armed for it, and starts its
// build.
func (nv *nova) register(s *server, now time.Time) {
	if f := nv.c.takeFault(FaultServerError, s.Name); f != nil {
		s.fault = f
	} else if f := nv.c.takeFault(FaultServerStuck, s.Name); f != nil {
		s.stuck = true
	}
	if f := nv.c.takeFault(FaultSSHDelay, s.Name); f != nil {
		s.sshDelay = f.Delay
	}
	s.listable = nv.c.listableAt(now)
	nv.servers[s.ID] = s
	nv.c.logf("cloud: server %s (%s) BUILD", s.ID, s.Name)
	nv.c.goAfter(nv.c.took(nv.c.o.Timing.ServerBuild, 0), func() { nv.buildServer(s) })
}
