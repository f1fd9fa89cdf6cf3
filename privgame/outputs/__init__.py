"""What a run is turned into for people: the reports, the figures, the release and the files
written where the user asks.
"""
