"""The task list of the Slurm recipe (ci/slurm/submit.sh): which machine
runs which torch on which partition.

One task a line, four fields separated by blanks; '#' starts a comment:

    PARTITION  DEVICE  NAME  TORCH

PARTITION is the Slurm partition the task runs on; DEVICE is cpu or cuda (a
cuda task asks for one GPU and fails when every GPU test skipped); NAME keys
the task's platform in the merged report (BACKENDCHECK_MACHINE); TORCH is a
release (2.11.0: installed from PyPI in a managed environment), an
interpreter's absolute path (the torch it imports), or `pinned` (the release
requirements/torch.txt pins). Each task writes its folder OUT/NAME, or
OUT/NAME-torchRELEASE for a release, as ci/nightly-gpu.sh does.

    python3 -m ci.slurm.tasks groups FILE      PARTITION DEVICE COUNT, one array each
    python3 -m ci.slurm.tasks task FILE PARTITION DEVICE INDEX
                                               NAME and TORCH of that array task
    python3 -m ci.slurm.tasks expected FILE    the folder each task writes

Bad input: one line FILE:LINE: field: message, exit status 1.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

DEVICES = ("cpu", "cuda")
NAME = re.compile(r"^[A-Za-z0-9._-]+$")  # ci/nightly-gpu.sh's rule for --name
RELEASE = re.compile(r"^[0-9]+(\.[0-9]+)+$")  # and for --torch
PARTITION = re.compile(r"^[A-Za-z0-9._-]+$")


class TaskError(ValueError):
    pass


@dataclass(frozen=True)
class Task:
    partition: str
    device: str
    name: str
    torch: str
    line: int

    @property
    def folder(self) -> str:
        """The folder under OUT that the task's run writes."""
        return f"{self.name}-torch{self.torch}" if RELEASE.match(self.torch) else self.name


def read(path: Path) -> list[Task]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TaskError(f"{path}:1: tasks: cannot be read ({e.strerror or e})") from e
    tasks: list[Task] = []
    folders: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"{path}:{number}"
        if len(fields) != 4:
            raise TaskError(f"{where}: task: {len(fields)} field(s); a task is PARTITION DEVICE NAME TORCH")
        partition, device, name, torch = fields
        if not PARTITION.match(partition):
            raise TaskError(f"{where}: PARTITION: '{partition}' is not a partition name")
        if device not in DEVICES:
            raise TaskError(f"{where}: DEVICE: '{device}' is neither cpu nor cuda")
        if not NAME.match(name):
            raise TaskError(f"{where}: NAME: '{name}' may hold only letters, digits, '.', '_' and '-'")
        if not (torch == "pinned" or RELEASE.match(torch) or torch.startswith("/")):
            raise TaskError(f"{where}: TORCH: '{torch}' is neither a release (2.11.0), an interpreter's "
                            "absolute path nor 'pinned'")
        task = Task(partition, device, name, torch, number)
        if task.folder in folders:
            raise TaskError(f"{where}: NAME: the folder {task.folder} is also line {folders[task.folder]}'s; "
                            "two tasks would write one platform")
        folders[task.folder] = number
        tasks.append(task)
    if not tasks:
        raise TaskError(f"{path}:1: tasks: no task in the file")
    return tasks


def groups(tasks: list[Task]) -> dict[tuple[str, str], list[Task]]:
    """One job array per partition and device, its tasks in the file's order."""
    out: dict[tuple[str, str], list[Task]] = {}
    for task in tasks:
        out.setdefault((task.partition, task.device), []).append(task)
    return out


def main(argv: list[str]) -> int:
    usage = ("usage: python3 -m ci.slurm.tasks groups FILE | task FILE PARTITION DEVICE INDEX | "
             "expected FILE")
    if len(argv) < 2 or argv[0] not in ("groups", "task", "expected"):
        print(usage, file=sys.stderr)
        return 2
    try:
        tasks = read(Path(argv[1]))
    except TaskError as e:
        print(e, file=sys.stderr)
        return 1
    if argv[0] == "groups" and len(argv) == 2:
        for (partition, device), members in groups(tasks).items():
            print(partition, device, len(members))
        return 0
    if argv[0] == "expected" and len(argv) == 2:
        for task in tasks:
            print(task.folder)
        return 0
    if argv[0] == "task" and len(argv) == 5:
        members = groups(tasks).get((argv[2], argv[3]), [])
        if not argv[4].isdigit() or int(argv[4]) >= len(members):
            print(f"{argv[1]}:1: tasks: no task {argv[4]} of partition {argv[2]} ({argv[3]}): "
                  f"{len(members)} there", file=sys.stderr)
            return 1
        task = members[int(argv[4])]
        print(task.name)
        print(task.torch)
        return 0
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
