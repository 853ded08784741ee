#!/bin/sh
# Lab stand-in for Rocky 9's /usr/bin/python3.9 (package @PKG@-@EVR@): the
# lab VM's userland is Debian's, so this runs the VM's own Python 3 under
# Rocky's name. Rocky's interpreter carries no PEP 668 marker and pip
# installs into it as root; Debian's does, so pip's guard is turned off
# here to behave as Rocky's does.
PIP_BREAK_SYSTEM_PACKAGES=1 exec /usr/bin/python3 "$@"
