"""CiteFinder: find the papers behind every [CITATION] in a draft, from your own library."""

__version__ = "0.1.0"
