package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oodContractRows are the Open OnDemand rows of docs/appliance-contract.md
// (openondemand, openondemand_desktop, _jupyter, _rstudio, _codeserver)
// as checkApplianceContract checks them from outside the booted image.
func oodContractRows(t *testing.T) []contractRow {
	t.Helper()
	req, err := os.ReadFile(filepath.Join("..", "appliance", "ansible", "roles", "openondemand", "files", "jupyter_requirements.txt"))
	if err != nil {
		t.Fatal(err)
	}
	nvr := func(pkgs ...string) string {
		return "rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' " + strings.Join(pkgs, " ")
	}
	return []contractRow{
		// the pin, where the snapshot's newest is 4.1.5; the streams'
		// packages and profiles, installed in the one transaction
		{"openondemand: ondemand-4.1.4 on nodejs:22 and ruby:3.3", nvr("ondemand") + "; rpm -q --qf '%{VERSION}\\n' nodejs ruby; " +
			"for m in nodejs ruby; do sed -n 's/^\\(stream\\|profiles\\|state\\)=//p' /etc/dnf/modules.d/$m.module | sort | paste -sd' ' -; done",
			"ondemand-4.1.4-1.el9\n22.19.0\n3.3.8\n22 common enabled\n3.3 common enabled"},
		// turbovnc's pin, where the repository's newest is 3.1.4; @Xfce
		// without its screensaver
		{"openondemand_desktop: turbovnc-3.0.1, @Xfce without xfce4-screensaver, tvncserver disabled",
			nvr("turbovnc", "nmap-ncat", "dbus-x11", "xfce4-session") + "; rpm -q xfce4-screensaver || true; systemctl is-enabled tvncserver.service || true",
			"turbovnc-3.0.1-20230811\nnmap-ncat-7.92-3.el9\ndbus-x11-1.12.20-8.el9\nxfce4-session-4.18.4-1.el9\npackage xfce4-screensaver is not installed\ndisabled"},
		{"openondemand_desktop: websockify venv made with python3.9, run link",
			"/opt/websockify-py39/bin/python -c 'import websockify; print(websockify.__version__)'; grep -c 'python3.9 -m venv /opt/websockify-py39$' /opt/websockify-py39/pyvenv.cfg; " +
				"readlink /opt/websockify/run; /opt/websockify/run",
			"0.13.0\n1\n/opt/websockify-py39/bin/websockify\nwebsockify 0.13.0"},
		{"openondemand_jupyter: venv made with python3.12 at the site's pins",
			"/opt/jupyter-py312/bin/python -c 'import jupyter, jupyterlab, notebook, jupyter_server, ipykernel as k; print(jupyter.__version__, jupyterlab.__version__, notebook.__version__, jupyter_server.__version__, k.__version__)'; " +
				"grep -c 'python3.12 -m venv /opt/jupyter-py312$' /opt/jupyter-py312/pyvenv.cfg; rpm -q --qf '%{NAME}\\n' python3.12",
			"1.1.1 4.6.1 7.6.0 2.20.0 7.3.0\n1\npython3.12"},
		{"openondemand_jupyter: the requirements file in the venv", "stat -c '%a %U:%G' /opt/jupyter-py312/jupyter_requirements.txt; cat /opt/jupyter-py312/jupyter_requirements.txt",
			"644 root:root\n" + strings.TrimSpace(string(req))},
		{"openondemand_rstudio: R, rstudio-server by URL, modulefile", nvr("R", "rstudio-server") + "; " +
			"stat -c %a /opt/ohpc/pub/modulefiles/rstudio-server/2025.05.1-513; grep '^prepend-path' /opt/ohpc/pub/modulefiles/rstudio-server/2025.05.1-513",
			"R-4.5.1-1.el9\nrstudio-server-2025.05.1+513-1\n644\nprepend-path PATH /usr/lib/rstudio-server/bin"},
		{"openondemand_codeserver: code-server by URL, modulefile", nvr("code-server") + "; " +
			"stat -c %a /opt/ohpc/pub/modulefiles/code-server/4.102.2; grep '^prepend-path' /opt/ohpc/pub/modulefiles/code-server/4.102.2",
			"code-server-4.102.2-1\n644\nprepend-path PATH /usr/lib/code-server/bin"},
	}
}
