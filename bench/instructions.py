"""The app's instructions per move, counted by valgrind: a figure the machine's speed cannot move.

    .venv/bin/python bench/instructions.py [--path browser] [--base /tmp/base] [--runs 2]
        [--moves 300] [--warmup 100] [--concurrency 4] [--rounds 2]

Every CPU figure of a move here (``app_cpu.py``, ``load.py --ceiling``) is time, and on the
shared boxes these benchmarks run on, time per move drifts by 15-20% between windows a few
seconds apart (bench/RESULTS.md, issue 26): a change worth 2-3% of a move cannot be told from
the drift. This counts instructions instead. ``app_cpu.py``'s moves (the app of ``create_app``
called in process by ``--concurrency`` API players or browsers, against a fresh PostgreSQL
database) run under valgrind's callgrind, which counts every instruction the process executes,
in every thread; callgrind is told over its control channel (``callgrind_control``) when each
measured window of ``--moves`` moves starts and ends, so that start-up and warm-up are not
counted. PostgreSQL's backends are processes of their own and are not counted, nor is the
kernel's share of a system call; the in-process client's instructions are (as in
``app_cpu.py``), the same on both sides of a comparison. The same moves give the same count to
within a fraction of a percent, whatever else the machine is doing.

Instructions are not time: a cache miss or a system call costs more than its instruction
count says. What the count tells is whether a change does less work, and how much; whether
that work was what the time went on is for the profiles and the time benchmarks to say.

``--base PATH``: another checkout of the app (a ``git worktree`` of the commit before a change,
say) measured in turn with this one, run for run: its ``app`` package is imported in place of
this checkout's, with this benchmark's own code driving it. Each run is one process under
valgrind (about fifty times slower than without: on a slow box a run of the defaults took 50-80 s
for API moves and about two minutes for board moves, so the defaults take up to four minutes
alone and eight with ``--base``).
It prints each run's instructions per move (the median of its windows), each checkout's
median, and the ratio of this checkout's to the base's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
_TOTALS = re.compile(r"^(?:summary|totals): (\d+)", re.MULTILINE)
# Under callgrind a move takes some fifty times as long: fewer moves than app_cpu.py's defaults.
SMALLER = ("--moves", "300", "--warmup", "100", "--rounds", "2", "--concurrency", "4")
_TRIGGER = re.compile(r"^desc: Trigger: .*?(window-\d+)\s*$", re.MULTILINE)


class CallgrindMarks:
    """``app_cpu.py``'s window marks as callgrind commands to this very process: counting
    switched on and zeroed as a window starts, the count dumped as ``window-N`` as it ends."""

    def __init__(self) -> None:
        self.pid = str(os.getpid())
        self.counting = False

    def _tell(self, *command: str) -> None:
        subprocess.run(
            ["callgrind_control", *command, self.pid], check=True, capture_output=True, text=True
        )

    def start(self, window: int) -> None:
        if not self.counting:  # start-up and warm-up ran uninstrumented (--instr-atstart=no)
            self._tell("--instr=on")
            self.counting = True
        self._tell("--zero")

    def end(self, window: int) -> None:
        self._tell(f"--dump=window-{window}")


def child(checkout: Path, out: Path, argv: list[str]) -> None:
    """Runs ``app_cpu.py``'s measure of the app of ``checkout`` under callgrind's marks and
    writes its result to ``out``."""
    sys.path.insert(0, str(HERE))
    import app_cpu  # puts this checkout's root on sys.path, for the benchmark's helpers

    # The app measured is the one of ``checkout``: first on the path, and not imported yet.
    assert "app" not in sys.modules
    sys.path.insert(0, str(checkout))
    args = app_cpu.arguments().parse_args(argv)
    marks = CallgrindMarks()

    async def measure(a: argparse.Namespace) -> dict[str, Any]:
        return await app_cpu.measure(a, marks)

    result = app_cpu.in_process(args, measure)
    import app  # (already imported by the measure)

    result["app imported from"] = str(Path(app.__file__).resolve().parent.parent)
    out.write_text(json.dumps(result))


def windows_counted(workdir: Path) -> dict[str, int]:
    """Each dumped window's instruction count, by its name, from callgrind's files."""
    found = {}
    for path in workdir.glob("callgrind.*"):
        text = path.read_text(errors="replace")
        trigger = _TRIGGER.search(text)
        totals = _TOTALS.search(text)
        if trigger and totals:
            found[trigger.group(1)] = int(totals.group(1))
    return found


def one_run(checkout: Path, passed: list[str], python: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ph-instructions-") as tmp:
        workdir = Path(tmp)
        out = workdir / "result.json"
        command = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={workdir}/callgrind.%p",
            python, str(Path(__file__).resolve()), "--child", str(checkout), str(out), *passed,
        ]  # fmt: skip
        done = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
        if done.returncode != 0 or not out.exists():
            tail = (done.stdout + done.stderr)[-3000:]
            raise SystemExit(f"the run under valgrind failed ({done.returncode}):\n{tail}")
        result = json.loads(out.read_text())
        counted = windows_counted(workdir)
    per_move = []
    for i, window in enumerate(result["windows"]):
        n = counted.get(f"window-{i}")
        if n is None:
            raise SystemExit(f"callgrind dumped no count for window {i}")
        per_move.append(round(n / window["moves"]))
    return {
        "app": result["app imported from"],
        "instructions a move, each window": per_move,
        "instructions a move": statistics.median(per_move),
        "answers": result["answers"],
        "machine": result["machine"],
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(Path(argv[1]), Path(argv[2]), argv[3:])
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Any other option is app_cpu.py's (--path, --moves, --warmup, --rounds, "
        "--concurrency, --seed, --database-url, ...), with smaller defaults: " + " ".join(SMALLER),
    )
    parser.add_argument("--base", type=Path, help="another checkout, measured in turn")
    parser.add_argument("--runs", type=int, default=2, help="runs of each checkout, alternated")
    args, rest = parser.parse_known_args(argv)
    sys.path.insert(0, str(HERE))
    import app_cpu

    passed = [*SMALLER, *rest]  # given last, the caller's own options win
    measured = app_cpu.arguments().parse_args(passed)  # refuses what app_cpu.py would
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    checkouts = {"this checkout": ROOT}
    if args.base is not None:
        checkouts["base"] = args.base.resolve()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    for _ in range(args.runs):
        for name, checkout in checkouts.items():
            run = one_run(checkout, passed, sys.executable)
            runs[name].append(run)
            print(f"{name}: {run['instructions a move']:,.0f} instructions a move", file=sys.stderr)
    medians = {
        name: statistics.median(r["instructions a move"] for r in rs) for name, rs in runs.items()
    }
    report: dict[str, Any] = {
        "machine": runs["this checkout"][0]["machine"],
        "path": measured.path,
        "runs": {
            name: [{k: v for k, v in r.items() if k != "machine"} for r in rs]
            for name, rs in runs.items()
        },
        "median instructions a move": medians,
    }
    if "base" in medians:
        report["this checkout / base"] = round(medians["this checkout"] / medians["base"], 4)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
