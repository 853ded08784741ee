package appliance

import "strings"

// Keys name the step as a table of what the plugin does natively names
// it, most specific first: a role as "role NAME TASKS_FROM" and "role
// NAME", a task (a module or a task file) as "task FILE: NAME" or, when
// unnamed, "task FILE: MODULE on HOSTS", and a hook as "hook NAME".
func (st Step) Keys() []string {
	switch st.Kind {
	case "role":
		if st.TasksFrom != "" {
			return []string{"role " + st.Name + " " + st.TasksFrom, "role " + st.Name}
		}
		return []string{"role " + st.Name}
	case "hook":
		return []string{"hook " + st.Hook}
	}
	if st.TaskName != "" {
		return []string{"task " + st.File + ": " + st.TaskName}
	}
	return []string{"task " + st.File + ": " + st.Name + " on " + st.Hosts}
}

// Label is the step as the build output and errors name it: the role
// (with its task file) or the task, and the file it is in.
func (st Step) Label() string {
	what := st.Kind + " " + st.Name
	switch st.Kind {
	case "role":
		if st.TasksFrom != "" {
			what += " (tasks_from " + st.TasksFrom + ")"
		}
	case "hook":
		return "hook " + st.Hook + " (" + st.Name + ")"
	default:
		if st.TaskName != "" {
			what = "task " + strings.TrimSpace(st.TaskName) + " (" + st.Name + ")"
		}
	}
	return what + " in " + st.File
}
