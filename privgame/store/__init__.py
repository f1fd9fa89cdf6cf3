"""The run store: run folders on disk, their files and their locks."""
