package packagesets

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
)

// dashboardsDir is where the appliance's grafana-dashboards role keeps
// the dashboard files its entries name (the role's files/), in the
// site's checkout.
const dashboardsDir = "{{appliance_dir}}/ansible/roles/grafana-dashboards/files/"

// dashboardItems are the appliance's grafana_dashboards entries as the
// grafana_dashboards content kind's items: `dashboard_id` and
// `revision_id` a grafana.com dashboard, `dashboard_file` a file of the
// role's files/ (an absolute path as it is), `replacements` a list of
// placeholder and replacement, as the role's tasks read them.
func dashboardItems(v any) ([]any, error) {
	entries, err := mappings(v)
	if err != nil {
		return nil, err
	}
	var out []any
	for i, m := range entries {
		item, err := dashboardItem(m)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, item)
	}
	return out, nil
}

// dashboardItem is one entry of grafana_dashboards as an item.
func dashboardItem(m map[string]any) (map[string]any, error) {
	item := map[string]any{}
	id, byID := m["dashboard_id"]
	file, byFile := m["dashboard_file"].(string)
	switch {
	case byID && byFile:
		return nil, fmt.Errorf("both dashboard_id and dashboard_file")
	case byID:
		n, err := wholeNumber("dashboard_id", id)
		if err != nil {
			return nil, err
		}
		rev, err := wholeNumber("revision_id", m["revision_id"])
		if err != nil {
			return nil, err
		}
		item["id"], item["revision"] = n, rev
	case byFile && file != "":
		if !path.IsAbs(file) {
			file = dashboardsDir + file
		}
		item["source"] = file
	default:
		return nil, fmt.Errorf("neither dashboard_id nor dashboard_file")
	}
	reps, ok := m["replacements"].([]any)
	if _, defined := m["replacements"]; defined && !ok {
		return nil, fmt.Errorf("replacements %v is not a list", m["replacements"])
	}
	if len(reps) > 0 {
		r := map[string]any{}
		for _, x := range reps {
			rm, _ := x.(map[string]any)
			ph, ok1 := rm["placeholder"].(string)
			to, ok2 := rm["replacement"].(string)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("replacement %v: a placeholder and a replacement, both strings", x)
			}
			r[ph] = to
		}
		item["replacements"] = r
	}
	return item, nil
}

// wholeNumber is an entry's number (JSON's float64, or a string of one).
func wholeNumber(name string, v any) (int, error) {
	switch x := v.(type) {
	case float64:
		if x == float64(int(x)) {
			return int(x), nil
		}
	case string:
		if n, err := strconv.Atoi(x); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s %v is not a whole number", name, v)
}

// dashboardValues are the items of dashboardItems as a source's values,
// one JSON object each (what image.json records).
func dashboardValues(v any) ([]string, error) {
	items, err := dashboardItems(v)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

// fromJSON are dashboardValues' items again, numbers as the group data's
// (int).
func fromJSON(vals []string) ([]any, error) {
	var out []any
	for _, v := range vals {
		var item map[string]any
		if err := json.Unmarshal([]byte(v), &item); err != nil {
			return nil, err
		}
		for _, k := range []string{"id", "revision"} {
			if n, ok := item[k].(float64); ok {
				item[k] = int(n)
			}
		}
		out = append(out, item)
	}
	return out, nil
}
