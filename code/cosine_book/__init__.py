"""Helper package for the *Local & Global Cosine* book."""

__version__ = "0.1.0"
