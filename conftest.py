"""pytest configuration shared by the package tests, doctests and notebook checks."""

from hypothesis import settings

# Property tests draw the same examples on every run (CI must not be flaky), keep no
# example database on disk, and never fail on timing.
settings.register_profile("book", derandomize=True, database=None, deadline=None)
settings.load_profile("book")
