#!/bin/sh
# Lab stand-in for @FILE@ from @NAME@ @VERSION@ (not the real program).
case "$1" in
  --version|-version|version|-v)
    echo "@FILE@, version @VERSION@ (lab stand-in)"
    echo "  build user:       lab"
    echo "  platform:         linux/amd64"
    exit 0 ;;
  --help|-h|help)
    echo "usage: @FILE@ [--version]  (lab stand-in of @NAME@ @VERSION@)"
    exit 0 ;;
esac
echo "@FILE@ @VERSION@ (lab stand-in): arguments ignored: $*" >&2
exit 0
