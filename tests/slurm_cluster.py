"""A single-node SLURM cluster for one test: munge, slurmctld and slurmd started in the foreground as child
processes of the test, configured from a temporary folder (SLURM_CONF), stopped when the test ends.

Needs Debian's `slurm-wlm` and `munge` and root (the daemons switch users and own /run paths); the configuration
is also put at /etc/slurm/slurm.conf while the cluster runs (jobs look for it there) and the file that was there,
if any, is put back. Without cgroups:
process tracking by /proc and no task plugin. The node declares the CPUs and memory that
`profiles/slurm/config.yaml` asks of a job (`config_overrides`), so the profile is tested as shipped, even on a
2-core machine; jobs then queue one after another. No accounting database: that is the case the profile must
survive (the Snakemake SLURM plugin polls `sacct` whenever the binary exists, and `sacct` fails without one).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo")
# Where a job's own srun looks: the Snakemake plugin clears SLURM_* variables (SLURM_CONF too) before it
# submits, so the configuration must be at SLURM's default place for as long as the cluster runs
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
PARTITION = "gpu"  # the profile's default partition


def vramlab_env(cache: Path) -> dict[str, str]:
    """The environment of a Snakemake run whose jobs go to the cluster (the test skipped where none can be had):
    this checkout's vramlab, and the session's model cache."""
    reason = missing()
    if reason:
        pytest.skip(reason)
    return {**os.environ, "VRAMLAB_CACHE": str(cache), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}


def missing() -> str | None:
    """Why this machine cannot host the cluster, or None."""
    if os.geteuid() != 0:
        return "the single-node SLURM cluster needs root"
    absent = [d for d in DAEMONS if not shutil.which(d) and not Path("/usr/sbin", d).exists()]
    if absent:
        return f"not installed: {', '.join(absent)} (apt-get install slurm-wlm munge)"
    return None


def _config(folder: Path, cpus: int, memory_mb: int) -> Path:
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(f"""ClusterName=vramlab-test
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=300
NodeName={host} CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
    for sub in ("state", "spool"):
        (folder / sub).mkdir(exist_ok=True)
    return conf


MUNGE_SOCKET = Path("/run/munge/munge.socket.2")


def _munged_running() -> bool:
    return subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode == 0


def _wait(what: str, check, timeout: float, logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    tail = "\n".join(f"--- {p}\n{p.read_text()[-2000:]}" for p in logs if p.exists())
    raise RuntimeError(f"single-node SLURM: {what} not ready after {timeout:.0f} s\n{tail}")


@contextmanager
def cluster(folder: Path, cpus: int, memory_mb: int) -> Iterator[dict[str, str]]:
    """Start the daemons; yield the environment that points clients at this cluster; stop them."""
    conf = _config(folder, cpus, memory_mb)
    env = {**os.environ, "SLURM_CONF": str(conf)}
    processes: list[subprocess.Popen] = []
    saved = SYSTEM_CONF.read_bytes() if SYSTEM_CONF.exists() else None
    SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(conf, SYSTEM_CONF)
    try:
        if not (_munged_running() and MUNGE_SOCKET.exists()):
            # a munged without its socket is one an earlier cluster is still stopping, or a broken one: it cannot
            # serve this cluster, so it ends (asked, then told) before ours starts
            subprocess.run(["pkill", "-x", "munged"], capture_output=True)
            try:
                _wait("the previous munged's exit", lambda: not _munged_running(), 10, [])
            except RuntimeError:
                subprocess.run(["pkill", "-KILL", "-x", "munged"], capture_output=True)
                _wait("the previous munged's exit", lambda: not _munged_running(), 10, [])
            Path("/run/munge").mkdir(parents=True, exist_ok=True)
            shutil.chown("/run/munge", "munge", "munge")
            processes.append(subprocess.Popen(["runuser", "-u", "munge", "--", "/usr/sbin/munged", "-F"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
            _wait("munged", MUNGE_SOCKET.exists, 30, [])
        processes.append(subprocess.Popen(["/usr/sbin/slurmctld", "-D", "-f", str(conf)], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
        processes.append(subprocess.Popen(["/usr/sbin/slurmd", "-D", "-f", str(conf)], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
        logs = [folder / "slurmctld.log", folder / "slurmd.log"]

        def idle() -> bool:
            out = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True).stdout
            return out.strip() in {"idle", "mix"}

        _wait("the node", idle, 60, logs)
        yield env
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in reversed(processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        if saved is None:
            SYSTEM_CONF.unlink(missing_ok=True)
        else:
            SYSTEM_CONF.write_bytes(saved)
