"""Baynet and PrivBayes. Placeholder module: being implemented."""
