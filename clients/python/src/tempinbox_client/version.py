"""The package's version (pyproject.toml holds the same; a test keeps them equal)."""

__version__ = "0.1.0"
