"""Runs a data owner starts from the dashboard: launched in the background, and remedies of an
audit.
"""
