#!/usr/bin/env bash
# slurm-local.sh start DIR | stop DIR | status DIR
#
# A private single-node Slurm on this machine, for the sharded-evaluation test (tests/e2e/e2e_slurm.sh)
# and for trying the recipe of docs/sharding.md by hand: munged, slurmctld and slurmd from Debian's
# `munge` and `slurm-wlm` packages (tools/setup.sh installs them), every file of theirs inside DIR (its
# own munge key and socket, slurm.conf, state, spool, logs), ports picked free on 127.0.0.1, run as root
# (SlurmUser=root, as in CI). Nothing under /etc is read or changed: clients find the cluster through
# SLURM_CONF=DIR/slurm.conf, which `start` prints as a line to eval.
#
#   eval "$(tools/slurm-local.sh start /tmp/slurm)"   # waits until the node is idle (bounded)
#   sbatch --array=0-3 --wrap 'hostname'             # ... use the cluster ...
#   tools/slurm-local.sh stop /tmp/slurm              # ends the daemons started in DIR
#
# Exit status: 0 ok; 1 the daemons did not start or the node did not come up (the reason and the last
# lines of the logs on stderr); 2 usage; 3 Slurm or munge is not installed.
set -u
usage() { echo "usage: $0 start DIR | stop DIR | status DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$2
[ -n "$dir" ] || usage
node=rdnode

need() {
    for b in munged slurmctld slurmd sbatch sinfo scontrol; do
        command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
        if ! command -v "$b" >/dev/null 2>&1; then
            echo "slurm-local: $b is not installed (apt-get install slurm-wlm munge, or bash tools/setup.sh --slurm)" >&2
            exit 3
        fi
    done
}

free_port() { # a TCP port nobody listens on
    local p
    for _ in $(seq 1 100); do
        p=$((20000 + RANDOM % 30000))
        (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return; }
    done
    return 1
}

stop_pidfile() { # stop_pidfile FILE: TERM, wait up to 10 s, then KILL the one process it names
    local f=$1 pid
    [ -s "$f" ] || return 0
    pid=$(cat "$f")
    case $pid in '' | *[!0-9]*) return 0 ;; esac
    kill -0 "$pid" 2>/dev/null || { rm -f "$f"; return 0; }
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    rm -f "$f"
}

show_logs() {
    for l in "$dir"/log/*.log; do
        [ -f "$l" ] || continue
        echo "--- $l (last lines)" >&2
        tail -n 15 "$l" >&2
    done
}

stop_all() {
    stop_pidfile "$dir/run/slurmd.pid"
    stop_pidfile "$dir/run/slurmctld.pid"
    stop_pidfile "$dir/run/munged.pid"
}

start() {
    need
    if [ "$(id -u)" -ne 0 ]; then
        echo "slurm-local: needs root (slurmd starts jobs as their user; CI runs as root)" >&2
        exit 1
    fi
    mkdir -p "$dir" || exit 1
    dir=$(cd "$dir" && pwd -P)
    stop_all
    mkdir -p "$dir/run" "$dir/log" "$dir/state" "$dir/spool" "$dir/munge" || exit 1
    chmod 0700 "$dir" "$dir/munge"
    chmod 0755 "$dir/run" "$dir/spool" "$dir/state" "$dir/log"
    # munge: a fresh key of our own (1 KiB from the kernel's generator), socket and seed inside DIR
    if [ ! -s "$dir/munge/munge.key" ]; then
        head -c 1024 /dev/urandom >"$dir/munge/munge.key" || exit 1
    fi
    chmod 0400 "$dir/munge/munge.key"
    local sock=$dir/munge/munge.socket
    munged --force --socket="$sock" --key-file="$dir/munge/munge.key" --pid-file="$dir/run/munged.pid" \
        --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" >>"$dir/log/munged.log" 2>&1
    if [ $? -ne 0 ]; then
        echo "slurm-local: munged did not start" >&2
        show_logs
        exit 1
    fi
    local ctl_port node_port cpus mem
    ctl_port=$(free_port) && node_port=$(free_port) || { echo "slurm-local: no free port" >&2; stop_all; exit 1; }
    [ "$ctl_port" != "$node_port" ] || node_port=$((ctl_port + 1))
    cpus=$(nproc)
    mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 / 2 }' /proc/meminfo)
    cat >"$dir/slurm.conf" <<EOF
# Written by tools/slurm-local.sh: a private single-node cluster (not /etc/slurm).
ClusterName=rdlocal
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmdPort=$node_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
MaxArraySize=1001
NodeName=$node NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=rd Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$dir/slurm.conf
    slurmctld -f "$SLURM_CONF" -i >>"$dir/log/slurmctld.out" 2>&1 || {
        echo "slurm-local: slurmctld did not start" >&2
        show_logs
        stop_all
        exit 1
    }
    slurmd -f "$SLURM_CONF" -N "$node" >>"$dir/log/slurmd.out" 2>&1 || {
        echo "slurm-local: slurmd did not start" >&2
        show_logs
        stop_all
        exit 1
    }
    # bounded wait (60 s) for the node to be idle
    local state=""
    for _ in $(seq 1 120); do
        state=$(timeout 5 sinfo -h -n "$node" -o %T 2>/dev/null | head -n 1)
        case $state in idle*) break ;; esac
        sleep 0.5
    done
    case $state in
    idle*) ;;
    *)
        echo "slurm-local: node $node is '${state:-unreachable}' after 60 s, not idle" >&2
        show_logs
        stop_all
        exit 1
        ;;
    esac
    echo "export SLURM_CONF=$SLURM_CONF"
}

case $cmd in
start) start ;;
stop)
    [ -d "$dir" ] || exit 0
    stop_all
    ;;
status)
    export SLURM_CONF=$dir/slurm.conf
    need
    timeout 5 sinfo
    ;;
*) usage ;;
esac
