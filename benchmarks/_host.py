"""How disturbed a benchmark's figures are: the share of CPU time the hypervisor gave to others.

On a shared virtual machine the host may run other guests on this machine's cores ("steal"
time, the eighth figure of the ``cpu`` line of ``/proc/stat``). Wall-clock figures and the
speed-up of 2 workers over 1 fall with it, so the benchmarks print it beside their figures.
"""

from __future__ import annotations

from pathlib import Path

_STAT = Path("/proc/stat")


def _cpu_times() -> list[int] | None:
    try:
        line = _STAT.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    fields = line.split()
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        return None
    return [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal


class StealMeter:
    """The share of all CPU time stolen by the hypervisor between construction and :meth:`share`."""

    def __init__(self) -> None:
        self.start = _cpu_times()

    def share(self) -> float | None:
        """Stolen ticks over all ticks since the start, or None where ``/proc/stat`` is missing."""
        end = _cpu_times()
        if self.start is None or end is None:
            return None
        delta = [b - a for a, b in zip(self.start, end, strict=True)]
        total = sum(delta)
        return delta[7] / total if total > 0 else 0.0

    def describe(self) -> str:
        """One line for a benchmark's output."""
        share = self.share()
        if share is None:
            return "host: steal time not available (no /proc/stat)"
        return (
            f"host: {share:.0%} of CPU time was stolen by the hypervisor during these figures "
            "(other guests on the same cores; wall times and speed-ups fall with it)"
        )
