"""What a data owner reads beside the verdicts: utility, comparisons of runs, checks of a synthetic
file, the time-budget planner.
"""
