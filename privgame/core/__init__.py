"""The core: errors, seeding, defaults, parameters, pure metrics and the records table's layout; it
imports nothing else of privgame.
"""
