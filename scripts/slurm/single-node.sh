#!/usr/bin/env bash
# specsim's single-node Slurm cluster on loopback, started by hand without
# systemd (Debian 12 slurm-wlm 22.05 + munge), for the Slurm integration
# test and for trying 'simulate slurm --submit' on one machine.
# Adapted from a working recipe; differences: the configuration lives in
# $SLURM_BASE/slurm.conf (export SLURM_CONF=$SLURM_BASE/slurm.conf for the
# clients; nothing under /etc/slurm is written) and the ports are
# configurable so it does not collide with a real cluster.
#
# Usage: single-node.sh install|up|down|status
#   install  apt-get install slurm-wlm munge (root) and make the munge key
#   up       stop what a previous 'up' left, then start munged (if no munge
#            daemon answers), slurmctld and slurmd; wait until the node is idle
#   down     stop the daemons this script started (by pid file only)
#   status   sinfo
# Env: SLURM_BASE (default /tmp/specsim-slurm), SLURM_CTLD_PORT (6817),
#      SLURM_D_PORT (6818), SLURM_UP_TIMEOUT seconds (30)
set -euo pipefail

MODE=${1:-}
BASE=${SLURM_BASE:-/tmp/specsim-slurm}
CONF=$BASE/slurm.conf
CTLD_PORT=${SLURM_CTLD_PORT:-6817}
D_PORT=${SLURM_D_PORT:-6818}
UP_TIMEOUT=${SLURM_UP_TIMEOUT:-30}
MUNGE_PID=/run/munge/munged.pid
MUNGE_MARK=$BASE/.munged-started-by-us
export SLURM_CONF=$CONF
log() { printf '[%(%H:%M:%S)T] single-node.sh: %s\n' -1 "$*" >&2; }

install_pkgs() {
  if ! dpkg-query -W -f='${Status}\n' slurm-wlm munge 2>/dev/null | grep -c 'install ok installed' | grep -qx 2; then
    log "installing slurm-wlm munge"
    apt-cache show slurm-wlm >/dev/null 2>&1 || apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
      --no-install-recommends slurm-wlm munge >/dev/null
  fi
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null \
      || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
  fi
}

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pidfile() {  # stop one daemon by its pid file: SIGTERM, wait up to 10 s, SIGKILL
  local pf=$1 pid
  alive "$pf" || { rm -f "$pf"; return 0; }
  pid=$(cat "$pf"); kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  rm -f "$pf"
}

down() {
  [ -d "$BASE" ] || return 0
  log "stopping the daemons started by this script"
  if alive "$BASE/slurmctld.pid" && [ -f "$CONF" ]; then timeout 5 scontrol shutdown >/dev/null 2>&1 || true; sleep 0.5; fi
  stop_pidfile "$BASE/slurmd.pid"
  stop_pidfile "$BASE/slurmctld.pid"
  if [ -e "$MUNGE_MARK" ]; then stop_pidfile "$MUNGE_PID"; rm -f "$MUNGE_MARK"; fi
}

write_conf() {
  local H node
  H=$(hostname -s)
  # NodeName must equal `hostname -s` and resolve.
  getent hosts "$H" >/dev/null || { log "adding $H to /etc/hosts"; echo "127.0.0.1 $H" >> /etc/hosts; }
  # Real topology and RealMemory from slurmd -C (a larger RealMemory would DRAIN the node).
  node=$(slurmd -C | sed -n 1p)
  cat > "$CONF" <<CONF
ClusterName=specsim
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmdPort=$D_PORT
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool
SlurmctldPidFile=$BASE/slurmctld.pid
SlurmdPidFile=$BASE/slurmd.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}

up() {
  command -v slurmctld >/dev/null && command -v munged >/dev/null \
    || { log "slurm-wlm/munge are not installed; run '$0 install' as root"; exit 1; }
  down
  rm -rf "$BASE"; mkdir -p "$BASE"/{state,spool,log}
  chown -R slurm:slurm "$BASE/state" "$BASE/log"
  write_conf
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "starting munged"
    install -d -o munge -g munge -m 755 /run/munge
    runuser -u munge -- /usr/sbin/munged
    touch "$MUNGE_MARK"
  fi
  log "starting slurmctld and slurmd ($CONF)"
  /usr/sbin/slurmctld -f "$CONF"   # daemonizes, drops to SlurmUser=slurm
  /usr/sbin/slurmd -f "$CONF"      # daemonizes, stays root (launches jobs as their user)
  local tries=$((UP_TIMEOUT * 5))
  for _ in $(seq "$tries"); do
    if sinfo -h -o %t 2>/dev/null | grep -qE '^idle'; then log "node idle"; sinfo >&2; return 0; fi
    sleep 0.2
  done
  log "the node did not become idle within ${UP_TIMEOUT}s; logs in $BASE/log"
  tail -n 20 "$BASE"/log/*.log >&2 || true
  exit 1
}

case $MODE in
  install) install_pkgs ;;
  up) up ;;
  down) down ;;
  status) sinfo ;;
  *) echo "usage: $0 install|up|down|status   (then export SLURM_CONF=$CONF)" >&2; exit 2 ;;
esac
