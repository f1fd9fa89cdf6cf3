"""A run's settings and the records it audits: the run spec, the set-ups, the generator options,
where work runs, the targets.
"""
