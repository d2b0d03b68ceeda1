"""The recorded runs kept as test data (reports/tests/data/, each folder with
a README): the two torch installs of an AVX-512 BF16 AMD CPU and of an
AVX-512 FP16 Intel CPU, kept as the archives they came in, and the H100
kit's four calls, kept unpacked."""

from __future__ import annotations

import atexit
import functools
import shutil
import tarfile
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
ZEN5 = DATA / "zen5-avx512bf16"
XEON = DATA / "xeon-avx512fp16"
H100 = DATA / "h100"
H100_CALLS = ("conformance-1", "torchpython-1", "claims-1", "tier-1")


def unpack_zen5(into: Path, machine: Path = ZEN5) -> dict[str, Path]:
    """The two torch installs' run directories (their evidence/, and for the
    AVX-512 BF16 CPU's their cases.json and ctest-tests.json), unpacked
    under `into`: torch version -> run directory. `machine`: the folder of
    another CPU's archives (XEON). Each archive is unpacked once a test
    session and copied from there, so that a test may alter its copy."""
    runs = {}
    for archive in sorted(machine.glob("torch-*.tar.gz")):
        version = archive.name.removesuffix(".tar.gz").removeprefix("torch-")
        shutil.copytree(_unpacked(archive), into / version)
        runs[version] = into / version / f"torch-{version}"
    return runs


_SESSION: Path | None = None


@functools.lru_cache(maxsize=None)
def _unpacked(archive: Path) -> Path:
    """The archive unpacked in this process's own directory, removed at its exit."""
    global _SESSION
    if _SESSION is None:
        _SESSION = Path(tempfile.mkdtemp(prefix="backendcheck-recorded-archives-"))
        atexit.register(shutil.rmtree, _SESSION, True)
    into = _SESSION / f"{archive.parent.name}-{archive.name}"
    with tarfile.open(archive) as tf:
        # the "data" filter where this Python has it (3.11.4 on; Debian 12's is 3.11.2)
        tf.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return into


def copy_h100(into: Path) -> dict[str, Path]:
    """The H100 kit's calls, copied under `into` (so that a test may alter
    them): call -> its directory (cases.json, evidence/, ...)."""
    calls = {}
    for call in H100_CALLS:
        shutil.copytree(H100 / call, into / "h100" / call)
        calls[call] = into / "h100" / call
    return calls


# The recorded runs' own errors: on the AVX-512 BF16 CPU's 1.13 the
# invariance grid's child under ONEDNN_MAX_CPU_ISA failed, so the two claims
# that level decides are errors there. A report of those runs with nothing
# else to say exits 1 for them (reports/pipeline.py EXIT_ERROR), after any
# finding's status, and names them on standard error.
ZEN5_ERRORS = (("batch-invariant", "vm (amd-avx512_bf16-2t-torch1.13.0a0)"),
               ("det-alg-thread-invariant", "vm (amd-avx512_bf16-2t-torch1.13.0a0)"))
ZEN5_STATUS = 1


class RecordedRuns:
    """Both recorded runs in a temporary directory of their own."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="backendcheck-recorded-")
        self.root = Path(self._tmp.name)
        self.cpu = unpack_zen5(self.root)
        self.gpu = copy_h100(self.root)
        self.manifest = self.cpu["2.15.0"] / "cases.json"

    def evidence(self) -> list[Path]:
        return [run / "evidence" for run in self.cpu.values()] + [c / "evidence" for c in self.gpu.values()]

    def edit(self, directory: Path, test: str, old: str, new: str, count: int = 1) -> None:
        """Replaces `old` by `new` in the records of `test` under `directory`
        (the first `count` times), failing where the records do not hold it."""
        done = 0
        for f in sorted(directory.glob("*.jsonl")):
            if done >= count:
                break
            text = f.read_text()
            if old not in text:
                continue
            lines = text.splitlines(keepends=True)
            for i, line in enumerate(lines):
                if done < count and f'"test":"{test}"' in line.replace(" ", "") and old in line:
                    lines[i] = line.replace(old, new)
                    done += 1
            if "".join(lines) != text:
                f.write_text("".join(lines))
        if done < count:
            raise AssertionError(f"{old!r} not found {count} time(s) in the records of {test} under {directory}")

    def close(self) -> None:
        self._tmp.cleanup()
