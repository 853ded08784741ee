# shellcheck shell=sh
# The built-in groups' run_after_packages scripts (shipped in the plugin,
# never a template's shell).

# after_packages_run <name> <script>: runs the script as its own sh -eu
# (a subshell on the left of || would run with errexit off), so its
# first failing command fails the step naming it.
after_packages_run() {
  echo "running $1"
  sh -eu -c "$2" || {
    fatimage_cause "run_after_packages: $1 failed"
    exit 1
  }
}
