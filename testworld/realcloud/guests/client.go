package guests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
)

// Listing is the guest host's answer to GET /servers.
type Listing struct {
	Servers []Listed `json:"servers"`
	// Processes is how many processes run in the host's VMs.
	Processes int `json:"processes"`
}

// Listed is one guest: its Nova instance's uuid and name, and its power.
type Listed struct {
	UUID  string `json:"uuid"`
	Name  string `json:"name"`
	Power string `json:"power"`
}

// List asks the guest host at socket for its guests.
func List(ctx context.Context, socket string) (Listing, error) {
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		},
	}}
	var l Listing
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://guests/servers", nil)
	if err != nil {
		return l, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return l, fmt.Errorf("guests: the guest host at %s: %w", socket, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return l, err
	}
	if resp.StatusCode != http.StatusOK {
		return l, fmt.Errorf("guests: GET /servers: %s: %s", resp.Status, body)
	}
	return l, json.Unmarshal(body, &l)
}
