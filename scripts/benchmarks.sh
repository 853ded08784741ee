#!/usr/bin/env bash
# Runs every benchmark once and prints every table (make bench): the lab's
# realistic timing profile first (the headline tables), then the fast
# profile for the whole-build, builder and interrupt tables. With --docs it then
# regenerates docs/benchmarks.md and the generated section of
# docs/reliability.md from this one run, stamped with the date, the commit,
# the machine and the profiles. The figures are never edited by hand.
#
# Environment: PACKER_BIN (default .tools/bin/packer), OFFICIAL_PLUGIN_DIR
# (default .tools/bin, see make official-tools), BENCH_ROUNDS (default 1
# here: the machine is shared, one round of each contender per profile),
# BENCH_HEADLINE_ROUNDS (default 3: the realistic whole build, whose
# figures are medians over its rounds; the appliance-style playbook, with
# no goal, runs in the first only), BENCH_WORKLOAD (default the realistic generated repository), BENCH_FROM
# (regenerate the docs from the raw output directory of an earlier run).
set -euo pipefail
cd "$(dirname "$0")/.."
docs=false
if [ "${1:-}" = "--docs" ]; then docs=true; fi

export FATIMAGE_E2E=1
export PACKER_BIN="${PACKER_BIN:-$PWD/.tools/bin/packer}"
export BENCH_ROUNDS="${BENCH_ROUNDS:-1}"
out=$(mktemp -d /tmp/fatimage-bench.XXXXXX)

# Packages that define a benchmark: every other lab package would start
# (and stop) a lab for nothing.
mapfile -t pkgs < <(git grep -l '^func Benchmark' -- '*_test.go' | xargs -n1 dirname | sort -u | sed 's|^|./|')

# run PROFILE REGEXP PACKAGES... runs the benchmarks one package at a time
# (two lab benchmarks never share the machine) and keeps the output.
run() {
  local profile=$1 re=$2
  shift 2
  LAB_PROFILE=$profile go test -p 1 -count 1 -run '^$' -bench "$re" -benchtime 1x -timeout 240m "$@" 2>&1 | tee -a "$out/$profile.txt"
}

if [ -n "${BENCH_FROM:-}" ]; then
  # regenerate the docs from an earlier run's raw output (its directory)
  out=$BENCH_FROM
else
  {
    echo "started=$(date -u +%Y-%m-%dT%H:%MZ)"
    echo "load_before='$(cut -d' ' -f1-3 /proc/loadavg)'"
    echo "commit=$(git rev-parse --short HEAD)"
    echo "dirty=$(git status --porcelain --untracked-files=no | wc -l)"
  } > "$out/meta"
  echo "benchmarks: raw output in $out" >&2
  # the headline: medians of BENCH_HEADLINE_ROUNDS whole builds (each
  # cloud transition is drawn afresh per build, ±30%)
  BENCH_ROUNDS="${BENCH_HEADLINE_ROUNDS:-3}" run realistic 'WholeBuild' ./testworld/bench/
  run realistic 'Builder|Resolve|BootToSSH|SBOMCost' "${pkgs[@]}"
  # the second table: the fast profile with the lab's stand-ins only (the
  # realistic workload's dnf time would hide the cloud's part), the
  # interrupts (what is left behind does not depend on the cloud's pace),
  # and what measures no cloud transition (provisioning on booted VMs, the
  # lab's start), where the realistic profile only added unmeasured boots;
  # and the RL9 and RL8 fat builds at once against one after the other
  # (the cloud's simulated waits would only stretch both sides alike)
  BENCH_WORKLOAD="${BENCH_FAST_WORKLOAD:-lab}" run fast 'WholeBuild|Builder|Interrupt|Provisioning|LabUp|ConcurrentBuilds' ./testworld/bench/ ./testworld/lab/
  echo "load_after='$(cut -d' ' -f1-3 /proc/loadavg)'" >> "$out/meta"
fi
started='' load_before='' load_after='' commit='' dirty=0
# shellcheck source=/dev/null
. "$out/meta"

if grep -q -- '^--- FAIL\|^FAIL' "$out/realistic.txt" "$out/fast.txt"; then
  echo "benchmarks: a benchmark failed (see $out); the docs are not regenerated" >&2
  exit 1
fi
$docs || exit 0

# tables FILE prints every "== title" table of a run as text blocks.
tables() {
  awk '/^== /{p=1; print "```text"} p{print} p&&/^$/{p=0; print "```"; print ""}' "$1"
}
# goals FILE lists the GOAL lines.
goals() {
  grep -h '^ *GOAL ' "$@" | sed 's/^ *GOAL /- /'
}
# why_whole FILE explains a missed whole-build goal against the expert
# playbook from the run's own GOAL lines: everything but provisioning (the
# cloud's part: server, boot, stop, snapshot) is the same work for both
# stacks, so it bounds the ratio whatever the provisioning takes.
why_whole() {
  local w p
  w=$(grep -h 'GOAL whole build ([a-z]*): fatimage / official+expert = .*NOT met' "$1") || return 0
  p=$(grep -h 'GOAL provisioning phase ([a-z]*): fatimage / official+expert = ' "$1") || return 0
  read -r wo we < <(sed -E 's/.*\(([0-9.]+) s \/ ([0-9.]+) s.*/\1 \2/' <<<"$w")
  read -r po pe < <(sed -E 's/.*\(([0-9.]+) s \/ ([0-9.]+) s.*/\1 \2/' <<<"$p")
  awk -v wo="$wo" -v we="$we" -v po="$po" -v pe="$pe" 'BEGIN {
    printf "- why the whole-build goal is not met: outside provisioning (the cloud'"'"'s part: the same work for both stacks, each simulated transition drawn with the profile'"'"'s jitter, so one round differs by chance) fatimage took %.1f s and official+expert %.1f s; for a ratio of 0.5 the expert playbook'"'"'s provisioning would have to take at least %.1f s, and it took %.1f s (ours %.1f s). On a loaded machine Ansible'"'"'s provisioning slows down more than ours while the simulated cloud does not, so this ratio improves with load: it is judged on a run'"'"'s own figures only.\n", wo - po, we - pe, 2 * wo - (we - pe), pe, po
  }'
}

if [ "$dirty" != 0 ]; then commit="$commit (with uncommitted changes)"; fi
machine="$(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $(free -g | awk '/^Mem:/{print $2}') GiB RAM, kernel $(uname -r), $(sed -n "s/^PRETTY_NAME=//p" /etc/os-release | tr -d '"')"
tools="$(go version | cut -d' ' -f3), $($PACKER_BIN version | head -1), ansible-core $(dpkg-query -W -f='${Version}' ansible-core), ansible (collections) $(dpkg-query -W -f='${Version}' ansible), Python $(python3 -c 'import platform; print(platform.python_version())')"

{
  cat <<EOF
# Benchmarks

<!-- Generated by scripts/benchmarks.sh --docs from one run: do not edit by hand. -->

**Run:** started $started, commit $commit.
**Machine:** $machine. Load average $load_before before the run, $load_after after it.
**Tools:** $tools.

The machine is shared with other work while the benchmarks run, so the
absolute seconds are noisy: what counts are the ratios, each taken between
contenders of the same run that took turns on the same machine. Counts
(dnf commands, reboots, API calls, resources left, secret hits) do not
depend on load.

Reproduce everything (root, about an hour): \`make bench\` prints every
table; \`./scripts/benchmarks.sh --docs\` also rewrites this file and the
generated section of [reliability.md](reliability.md).

## Goals

Realistic profile (the headline):

$(goals "$out/realistic.txt")
$(why_whole "$out/realistic.txt")

Fast profile:

$(goals "$out/fast.txt")
$(why_whole "$out/fast.txt")

## What is real and what is simulated

| Part | Real | Simulated |
| --- | --- | --- |
| \`packer\` | the pinned packer binary, whole \`packer build\`s | |
| Today's stack | hashicorp/packer-plugin-openstack v1.1.2 and packer-plugin-ansible v1.1.2 built from tools/official, Debian's ansible-playbook with pipelining and ControlPersist, profile_tasks from Debian's ansible package | the playbooks are ours (testworld/bench/playbook): an appliance-style one and an expert-tuned one doing the same work |
| Our stack | the plugin built from this commit | |
| OpenStack | | the lab's API double (testworld/lab/cloud), speaking the real APIs; in the realistic profile its transitions take real clouds' times (server build ~20 s, guest boot ~45 s, stop ~15 s, snapshot ~10 s plus data at 100 MiB/s, volume create ~20 s, ±30% jitter, lists lagging 0.5-1 s); in the fast profile a fraction of a second |
| Build VMs | systemd as PID 1, cloud-init, sshd, dnf and rpm of a Debian userland, in network namespaces | not a Rocky kernel: a reboot restarts the namespace's systemd (the profile adds the hypervisor's time) |
| Repositories | signed createrepo_c repositories served over HTTP with Ark's credentials by the Pulp double | the packages are generated: the lab's stand-ins plus, in the whole-build table, the realistic workload below; the network: in the realistic profile the VMs reach the Pulp double through a link of 20 ms each way and 50 MB/s per VM played by its listener (docs/lab.md), in the fast profile at loopback speed |
| Data source | the plugin's resolver and Python (requests + bs4; stdlib threads) against the Pulp double | 50 ms injected per request |

**The realistic workload** (the realistic profile's whole-build table;
the fast profile's uses the lab's stand-ins only, so the cloud's part
shows): on top of the control
group's package sets, a generated repository of about 1,000 packages and
400 MiB of RPMs (incompressible payloads, one package in ten ten times the
size of the others) reached from 20 top-level packages through 6 layers of
Requires, each layer twice the one above plus a cross-link two layers down,
as the Slurm and Open OnDemand sets fan out into libraries. It stands for
what a fat Slurm appliance image adds to the Rocky 9 GenericCloud base.
It is built once and cached under the lab's cache
(\`~/.cache/fatimage-lab/repos/workload-<hash>\`, flock'd, named by a
hash of its recipe) and signed with the lab key; \`BENCH_WORKLOAD=small\`
scales it to a tenth, \`BENCH_WORKLOAD=lab\` leaves it out.

**The end-state check.** After each whole build the benchmark reads the
image's disk (its overlay upper directory: everything the build wrote):
\`rpm -qa\` from the image's rpm database, its users and groups, and every
file with type, mode, owner and a content hash. Every image must equal
ours of the first round but for the allow-list in
\`testworld/bench/endstate.go\` (\`EndStateAllowList\`: rpm and dnf
databases, logs, caches, cloud-init's per-instance state, host keys, the
build's temporary SSH key, Ansible's temporary directories, image.json),
or the benchmark fails.

**Phases.** Each line of packer's output is stamped as it arrives. The
whole build is split at lines both builders print: "Waiting for SSH to
become available" (the cloud's part), "Connected to SSH!" (the guest's
boot), "Stopping server" (provisioning), then stop, snapshot and upload
until packer exits. Inside provisioning, ours is split at its step lines
(\`fatimage: <step>\`), Ansible's by profile_tasks (every task, in run
order); both are grouped into the same phases.

## Headline: realistic profile

$(tables "$out/realistic.txt")

## Second table: fast profile

$(tables "$out/fast.txt")

## Every benchmark's metrics (\`b.ReportMetric\`), both profiles

\`\`\`text
$(grep -h '^Benchmark' "$out/realistic.txt" | sed 's/^/realistic  /')
$(grep -h '^Benchmark' "$out/fast.txt" | sed 's/^/fast       /')
\`\`\`

## How each contender runs

- **Whole build** (\`BenchmarkWholeBuild\`): one template per stack,
  written as HCL2 JSON: same source image, flavor, floating IP network,
  SSH user, snapshots (the lab's newer Ark snapshots plus the workload's),
  package sets, binaries and users, and the control group's content
  (files, line edits, systemd units, modprobe blacklist, tmpfiles, Grafana
  dashboards from the lab's grafana.com stand-in, the standard
  repositories' keys, the rclone stub). Ours gets them as the
  provisioner's configuration, today's stack as the playbook's extra vars
  taken from the same built-in group data, which the playbooks turn into
  files with Ansible's modules (appliance-style: a task per kind) or one
  shell task (expert). The stacks take turns; with more rounds the order
  rotates. In the realistic profile ours and the expert playbook run
  \`BENCH_HEADLINE_ROUNDS\` (default 3) rounds and the appliance-style
  playbook, which no goal depends on, the first only; every goal is taken
  from the medians over the rounds, each figure (wall, every phase) its
  own median, the official builder's boot wait over both playbooks' builds.
  The cloud double draws each transition's time with ±30% jitter, the
  same draws for every stack of one round (\`Cloud.SeedJitter\`, so the
  stacks meet the same cloud) and others in the next; both builders dial
  SSH in the Packer SDK's loop every 5 s, so a build's "guest boot until
  SSH" is its boot draw rounded up to the next 5 s step.
- **Provisioning only** (\`BenchmarkProvisioning\`, fast profile: the
  realistic one only made the VMs' unmeasured boots longer): the provisioner
  in-process over the SDK's SSH communicator, ansible-playbook, and the
  bare commands the provisioner sent (the floor), each on a fresh VM; SSH
  sessions and dnf processes counted on the VM the same way for all.
- **Appliance variable resolution** (in \`BenchmarkWholeBuild\`, both
  profiles): each round resolves once what a build with
  \`appliance_dir\` and \`appliance_environment\` resolves in its first
  step (\`fatimage.ApplianceRequest\` through \`internal/appliance\`,
  the real appliance checkout and \`testworld/appliancesite\`'s
  \`overrides\` environment) on a fresh lab VM, its boot not counted,
  beside that round's fatimage whole build (which uses the built-in
  values, as its image is compared with today's stack's); the share is
  resolution / (whole build + resolution), from the medians.
- **SBOM cost** (\`BenchmarkSBOMCost\`): the provisioner in-process
  with the whole-build workload on two fresh VMs, without the SBOM
  options and then with \`sbom_output\`, \`change_report_output\` and
  \`previous_manifest\` naming the first run's manifest; the \`sbom\`
  step is timed from the provisioner's own output lines, against that
  run's whole provisioning.
- **Concurrent builds** (\`BenchmarkConcurrentBuilds\`, fast profile):
  our RL9 and RL8 fat builds (the templates of testworld/e2e's
  \`TestFatBuild\` and \`TestFatBuildRocky8\`) started at once with the
  real packer binary on one runner, and the same two one after the other;
  each build's wall time, both builds' and their ratio. While a build
  runs, every \`packer-plugin-fatimage\` process in its packer's process
  group (one per component) is read from /proc every 100 ms: the peak of
  their VmRSS summed at one sample is the build's plugin memory, and each
  process's VmHWM (the kernel's own high-water mark, which no gap between
  samples lowers) is shown beside it.
- **Builder** (\`BenchmarkBuilder\`): a builder-only build; the cloud
  records when each resource changed state and when the builder first read
  the new state.
- **Data source** (\`BenchmarkResolve60ReposVsPython\`): 60 repositories,
  50 ms per request; the content app's request log gives requests per
  repository.
- **Reliability** (\`BenchmarkInterrupt\`, also in
  [reliability.md](reliability.md)): SIGINT to packer's process group at
  the same moments for both stacks (found from the cloud's own state or
  from lines both print), then resources left once the cloud settled and
  secret hits in packer's output and \`PACKER_LOG\`.
EOF
} > docs/benchmarks.md

# The generated section of docs/reliability.md.
section=$(mktemp)
{
  echo "<!-- bench:start (generated by scripts/benchmarks.sh --docs; run $started, commit $commit) -->"
  echo
  awk '/^== (Reliability|Whole packer build)/{p=1; print "```text"} p{print} p&&/^$/{p=0; print "```"; print ""}' "$out/realistic.txt" "$out/fast.txt"
  echo "The whole-build table's \"secret hits\" column counts the lab's secrets in packer's output, \`PACKER_LOG\` and every file of the image, for both stacks."
  echo
  echo "<!-- bench:end -->"
} > "$section"
awk -v f="$section" '
  /<!-- bench:start/ {while ((getline l < f) > 0) print l; skip=1; next}
  /<!-- bench:end -->/ {skip=0; next}
  !skip {print}' docs/reliability.md > "$section.new"
mv "$section.new" docs/reliability.md
rm -f "$section"
echo "benchmarks: docs/benchmarks.md and docs/reliability.md regenerated" >&2
