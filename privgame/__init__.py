"""privgame: record-level membership-inference risk audits of synthetic data releases.

The Python API (:mod:`privgame.api`)::

    import privgame

    audit = privgame.audit("data/adult.csv.gz", "synthpop")  # or a DataFrame
    print(audit.verdict())
    audit.records()                      # the audited records, one row each
    audit.high_risk(screened=True)       # every record at risk, screened ones included
    privgame.audit(df, secrets="income")  # + each record's attribute-inference gain
    audit.report("report.html")
    audit.release("release.csv")         # refused while records are at risk
    privgame.open("runs/20261207-...")   # a stored run, from any face

Names are imported when first used, so ``import privgame`` loads nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from privgame._version import __version__

__all__ = ["Audit", "__version__", "audit", "open"]

if TYPE_CHECKING:
    from privgame.api import Audit, audit
    from privgame.api import open_audit as open


def __getattr__(name: str) -> Any:
    if name in ("Audit", "audit", "open"):
        from privgame import api

        return {"Audit": api.Audit, "audit": api.audit, "open": api.open_audit}[name]
    raise AttributeError(f"module 'privgame' has no attribute {name!r}")
