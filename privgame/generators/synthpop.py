"""Synthpop (CART). Placeholder module: being implemented."""
