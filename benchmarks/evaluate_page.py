"""How fast the Evaluate page estimates: the first estimate, and again after each change.

Usage: ``python benchmarks/evaluate_page.py [--rows 50000]``

Drives the dashboard's Evaluate page with Streamlit's AppTest (in this process, no browser) on
a ``--rows``-row table resampled from Adult's rows (``benchmarks/estimate.py``'s ``large`` table:
the release set-up holds back 30%, so D has 35,000 rows), Synthpop, the default plan (20 most
outlying + 20 random records, N_shadow 1,000, N_eval 200), 2 workers. Prints the seconds until the
page shows its first estimate, then the seconds of the rerun after each change a data owner makes
while sizing a plan (N_shadow, N_eval, the records, t, the seed), and the estimate each showed.
Issue 32's goals: the first estimate within 20 s, a changed setting re-estimated within 3 s.
Last, a second session (a new browser tab) opens the page on the same table and set-up: its
estimate reuses the first session's timing (``privgame.games.estimate.calibrate_once``).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from estimate import large_table
from streamlit.testing.v1 import AppTest

from privgame.data import load_dataset

ROOT = Path(__file__).resolve().parents[1]


def _estimate(at: AppTest) -> str:
    for element in at.info:
        found = re.search(r"Estimated time: \*\*about ([^*]+)\*\*", str(element.value))
        if found:
            return found.group(1)
    return "none shown"


def _open_evaluate(dataset: object) -> tuple[AppTest, float]:
    """A new session (a browser tab) on the table, the release set-up and 2 workers: the page and
    the seconds until it shows its first estimate."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    at.session_state["dataset"] = dataset
    at.session_state["setup"] = {"kind": "release", "population": None, "holdout": 0.3}
    started = time.perf_counter()
    at.switch_page("pages/2_Evaluate.py").run()
    at.number_input(key="workers").set_value(2).run()
    return at, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    import os

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PRIVGAME_RUNS"] = str(Path(tmp) / "runs")
        dataset = load_dataset(large_table(Path(tmp)))
        at, first = _open_evaluate(dataset)
        errors = [str(e.value) for e in at.error]
        if errors:
            raise SystemExit(f"the page shows errors: {errors}")
        print(f"first estimate: {first:.1f} s (shows: about {_estimate(at)})")
        for label, key, value in (
            ("N_shadow 1,000 -> 200", "n_shadow", 200),
            ("N_eval 200 -> 100", "n_eval", 100),
            ("most outlying K 20 -> 10", "plan_outliers", 10),
            ("random M 20 -> 40", "plan_random", 40),
            ("threshold t 0.8 -> 0.7", "threshold", 0.7),
            ("seed 0 -> 1", "seed", 1),
        ):
            widget = at.slider(key=key) if key == "threshold" else at.number_input(key=key)
            started = time.perf_counter()
            widget.set_value(value).run()
            seconds = time.perf_counter() - started
            print(f"{label:28s} re-estimated in {seconds:4.1f} s (shows: about {_estimate(at)})")
        tab, seconds = _open_evaluate(dataset)
        print(f"a second tab, same set-up: first estimate {seconds:.1f} s (shows: about {_estimate(tab)})")


if __name__ == "__main__":
    main()
