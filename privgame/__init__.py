"""privgame: record-level membership-inference risk audits of synthetic data releases."""

__version__ = "0.1.0"
