"""The cluster recipe (ci/slurm/) on a real scheduler.

Without Slurm: the task list's checks (one line FILE:LINE: field), the
submit script's job arrays and merge dependency (--dry-run), and the merge
job naming a task that wrote nothing.

With Slurm (the ctest test ci.slurm, labelled slurm, which `./backendcheck
test` leaves out): a one-node cluster of Debian's slurm-wlm and munge started
here in a temporary folder (munged, slurmctld, slurmd: one node named by
`hostname -s`, 2 CPUs, root), an array of two smoke runs of one torch under
two machine names, one after the other (they share this checkout's build
directory), then the merge job; the merged report holds both platforms.
Every daemon started is stopped, whatever happens.

    python3 -m ci.tests.test_slurm [TORCH_PYTHON]     (ctest -L slurm)

TORCH_PYTHON: the torch of both runs (default: BACKENDCHECK_TORCH_PYTHON, or
the managed pinned release). Exit status 77 (ctest's skip) where Slurm or
munge is not installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from ci.tests.test_ci import ROOT, other_errors, pinned_torch, run, write_machine_folder

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo")
SEARCH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
LIVE: dict[str, str] = {}  # {"torch": TORCH_PYTHON} when run as the ctest test
WAIT_S = 3600  # the array and the merge; a first build of the tree takes most of it


def missing_programs() -> list[str]:
    return [p for p in PROGRAMS if shutil.which(p, path=SEARCH) is None]


class TaskListTest(unittest.TestCase):
    def check(self, text: str) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory() as tmp:
            tasks = Path(tmp) / "tasks.txt"
            tasks.write_text(text)
            r = run(sys.executable, "-m", "ci.slurm.tasks", "expected", str(tasks))
            return subprocess.CompletedProcess(r.args, r.returncode, r.stdout, r.stderr.replace(str(tasks), "TASKS"))

    def test_the_repository_list(self) -> None:
        r = run(sys.executable, "-m", "ci.slurm.tasks", "groups", "ci/slurm/tasks.txt")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("h100 cuda 2", r.stdout)

    def test_each_task_writes_a_folder_of_its_own(self) -> None:
        r = self.check("# comment\ngpu cuda h100 pinned\ngpu cuda h100 2.11.0  # a release\ncpu cpu xeon /usr/bin/python3\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["h100", "h100-torch2.11.0", "xeon"])

    def test_bad_lines(self) -> None:
        for text, line in (("gpu cuda h100\n", "TASKS:1: task: 3 field(s)"),
                           ("\ngpu tpu h100 pinned\n", "TASKS:2: DEVICE: 'tpu' is neither cpu nor cuda"),
                           ("gpu cuda 'h 1' pinned\n", "TASKS:1: task: 5 field(s)"),
                           ("gpu cuda h/1 pinned\n", "TASKS:1: NAME: 'h/1'"),
                           ("gpu cuda h100 latest\n", "TASKS:1: TORCH: 'latest'"),
                           ("gpu cuda h100 pinned\ncpu cpu h100 /usr/bin/python3\n",
                            "TASKS:2: NAME: the folder h100 is also line 1's"),
                           ("# none\n", "TASKS:1: tasks: no task")):
            r = self.check(text)
            self.assertEqual(r.returncode, 1, text)
            self.assertTrue(r.stderr.startswith(line), r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)

    def test_an_array_task_out_of_range(self) -> None:
        r = run(sys.executable, "-m", "ci.slurm.tasks", "task", "ci/slurm/tasks.txt", "h100", "cuda", "2")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no task 2 of partition h100 (cuda): 2 there", r.stderr)


class SubmitTest(unittest.TestCase):
    def test_one_array_per_partition_then_the_merge(self) -> None:
        r = run("ci/slurm/submit.sh", "--out", "/tmp/slurm-out", "--tier", "smoke", "--throttle", "1",
                "--sbatch-arg", "--time=120", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        sbatch = [line for line in r.stderr.splitlines() if line.startswith("+ sbatch")]
        self.assertEqual(len(sbatch), 4, r.stderr)  # h100, a100, cpu, the merge
        self.assertIn("--partition=h100 --gres=gpu:1 --array=0-1%1", sbatch[0])
        self.assertIn("ci/slurm/task.sh", sbatch[0])
        self.assertIn("/tmp/slurm-out h100 cuda smoke", sbatch[0])
        self.assertNotIn("--gres", sbatch[2])
        self.assertIn("--array=0-0%1", sbatch[2])
        self.assertIn("--dependency=afterany:backendcheck-h100:backendcheck-a100:backendcheck-cpu", sbatch[3])
        self.assertIn("ci/slurm/merge.sh", sbatch[3])
        self.assertTrue(all("--time=120" in line for line in sbatch))
        self.assertIn("slurm-submit: merge job backendcheck-merge after", r.stdout)

    def test_bad_input(self) -> None:
        r = run("ci/slurm/submit.sh", "--out", "x", "--tier", "weekly", "--dry-run")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--tier weekly", r.stderr)
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as tasks:
            tasks.write("gpu cuda h100\n")
            tasks.flush()
            r = run("ci/slurm/submit.sh", "--out", "x", "--tasks", tasks.name, "--dry-run")
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stderr.strip(), f"{tasks.name}:1: task: 3 field(s); a task is PARTITION DEVICE NAME TORCH")


class MergeJobTest(unittest.TestCase):
    def test_a_task_that_wrote_nothing_is_named(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            tasks = Path(tmp) / "tasks.txt"
            tasks.write_text("gpu cuda h100 2.15.0\ngpu cuda a100 2.15.0\n")
            write_machine_folder(out / "h100-torch2.15.0", "h100", "2.15.0+cu132", "aaaa")
            (out / "logs").mkdir()
            r = run("ci/slurm/merge.sh", str(tasks), str(out))
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(f"slurm-merge: the task a100-torch2.15.0 wrote no evidence in {out}/a100-torch2.15.0",
                          r.stderr)
            self.assertEqual((out / "missing.txt").read_text(), "a100-torch2.15.0\n")
            self.assertIn("1 of 2 task(s) wrote evidence", r.stdout)
            report = json.loads((out / "merged-report" / "report.json").read_text())
            self.assertEqual(len(report["platforms"]), 1)
            # Both there: no task missing, the merge's own exit.
            write_machine_folder(out / "a100-torch2.15.0", "a100", "2.15.0+cu132", "aaaa")
            r = run("ci/slurm/merge.sh", str(tasks), str(out))
            self.assertEqual(other_errors(r), [])
            self.assertEqual((out / "missing.txt").read_text(), "")
            self.assertIn("2 of 2 task(s) wrote evidence", r.stdout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OneNodeSlurm:
    """munged, slurmctld and slurmd of this machine, in a folder of their own."""

    def __init__(self, folder: Path) -> None:
        self.dir = folder
        self.procs: list[subprocess.Popen] = []
        self.host = socket.gethostname().split(".")[0]
        self.conf = folder / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf), PATH=SEARCH)

    def start(self) -> None:
        d = self.dir
        os.chmod(d, 0o711)
        for sub in ("state", "spool"):
            (d / sub).mkdir()
        key = d / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self.spawn("munged", "-F", "--force", f"--socket={d}/munge.sock", f"--key-file={key}",
                   f"--log-file={d}/munged.log", f"--pid-file={d}/munged.pid", f"--seed-file={d}/munged.seed")
        self.wait_for(lambda: (d / "munge.sock").exists(), "munged's socket")
        self.conf.write_text("\n".join([
            "ClusterName=backendcheck", f"SlurmctldHost={self.host}", "SlurmUser=root", "SlurmdUser=root",
            f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={d}/munge.sock",
            f"StateSaveLocation={d}/state", f"SlurmdSpoolDir={d}/spool",
            f"SlurmctldPidFile={d}/slurmctld.pid", f"SlurmdPidFile={d}/slurmd.pid",
            f"SlurmctldLogFile={d}/slurmctld.log", f"SlurmdLogFile={d}/slurmd.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU", "MpiDefault=none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none", "ReturnToService=2", "MinJobAge=3600",
            f"NodeName={self.host} CPUs=2 State=UNKNOWN",
            f"PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP", ""]))
        self.spawn("slurmctld", "-D", "-f", str(self.conf))
        self.spawn("slurmd", "-D", "-f", str(self.conf))
        self.wait_for(lambda: self.query("sinfo", "-h", "-o", "%T").strip() == "idle", "the node idle in sinfo")

    def spawn(self, program: str, *args: str) -> None:
        log = open(self.dir / f"{program}.out", "wb")
        self.procs.append(subprocess.Popen([shutil.which(program, path=SEARCH) or program, *args],
                                           stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                           start_new_session=True))
        log.close()

    def query(self, *args: str) -> str:
        r = subprocess.run(list(args), capture_output=True, text=True, env=self.env, timeout=60, check=False)
        return r.stdout if r.returncode == 0 else ""

    def wait_for(self, ready, what: str, limit: float = 60) -> None:
        end = time.monotonic() + limit
        while not ready():
            dead = [p.args[0] for p in self.procs if p.poll() is not None]
            if dead or time.monotonic() > end:
                logs = "".join((self.dir / f).read_text(errors="replace")[-1500:]
                               for f in ("munged.out", "slurmctld.out", "slurmd.out") if (self.dir / f).exists())
                raise RuntimeError(f"the one-node Slurm did not come up: no {what}"
                                   f"{' (' + ', '.join(dead) + ' exited)' if dead else ''}\n{logs}")
            time.sleep(0.5)

    def stop(self) -> None:
        """Every daemon started, the last first: TERM, then KILL after 20 s."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=20)
        self.procs.clear()


@unittest.skipUnless(LIVE or os.environ.get("BACKENDCHECK_SLURM_TEST") == "1",
                     "the one-node Slurm runs in the ctest test ci.slurm (ctest -L slurm)")
class OneNodeSlurmTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="backendcheck-slurm-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.slurm = OneNodeSlurm(self.tmp)
        self.addCleanup(self.slurm.stop)
        self.slurm.start()

    def test_an_array_of_two_smoke_runs_then_the_merge(self) -> None:
        torch = LIVE.get("torch") or os.environ.get("BACKENDCHECK_TORCH_PYTHON", "")
        if not torch:
            torch = str(Path.home() / ".cache" / "backendcheck" / f"torch-{pinned_torch()}" / "bin" / "python")
        out = self.tmp / "out"
        tasks = self.tmp / "tasks.txt"
        tasks.write_text(f"debug cpu slurm-a {torch}\ndebug cpu slurm-b {torch}\n")
        start = time.monotonic()
        # Both runs build in this checkout's build directory of that torch: one at a time.
        r = subprocess.run(["ci/slurm/submit.sh", "--tasks", str(tasks), "--out", str(out), "--tier", "smoke",
                            "--throttle", "1"], cwd=ROOT, env=self.slurm.env, capture_output=True, text=True,
                           timeout=120, check=False)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        print(r.stdout, end="", flush=True)
        jobs = re.findall(r"^slurm-submit: (?:array|merge) job (\d+)", r.stdout, re.M)
        self.assertEqual(len(jobs), 2, r.stdout)
        while self.slurm.query("squeue", "-h", "-o", "%i %T", "-t", "PD,CF,R,CG,S", "-j", ",".join(jobs)).strip():
            self.assertLess(time.monotonic() - start, WAIT_S, "the array and the merge did not end in time")
            time.sleep(5)
        took = time.monotonic() - start
        logs = {p.name: p.read_text(errors="replace") for p in sorted((out / "logs").glob("*.out"))}
        tail = "\n".join(f"== {name}\n{text[-3000:]}" for name, text in logs.items())
        merge = "".join(text for name, text in logs.items() if name.startswith("backendcheck-merge-"))
        self.assertIn("2 of 2 task(s) wrote evidence", merge, tail)
        self.assertEqual((out / "missing.txt").read_text(), "", tail)
        status = re.search(r"merge exit (\d+)", merge)
        # 1 would be the harness's own failure; 0, 3, 4 or 5 are verdicts.
        self.assertIn(status and status.group(1), ("0", "3", "4", "5"), tail)
        report = json.loads((out / "merged-report" / "report.json").read_text())
        machines = sorted(p.split(" (")[0] for p in report["platforms"])
        self.assertEqual(machines, ["slurm-a", "slurm-b"], report["platforms"])
        for name in ("slurm-a", "slurm-b"):
            self.assertTrue(any(f.name.endswith(".jsonl") for f in (out / name / "evidence").iterdir()), name)
        print(f"slurm: the array of two smoke runs and the merge took {took:.0f} s (merge exit {status.group(1)}); "
              f"platforms: {'; '.join(report['platforms'])}", flush=True)


def main(argv: list[str]) -> int:
    gone = missing_programs()
    if gone:
        print(f"SKIP: Slurm is not installed here (no {', '.join(gone)}): apt-get install slurm-wlm munge")
        return 77
    if os.geteuid() != 0:
        print("SKIP: the one-node Slurm runs its daemons as root (SlurmUser=root): run as root")
        return 77
    LIVE["torch"] = argv[0] if argv else ""
    OneNodeSlurmTest.__unittest_skip__ = False
    result = unittest.main(module=__name__, argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
