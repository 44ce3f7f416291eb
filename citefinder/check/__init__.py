"""Checking the citations a draft already holds: does each cited key fit its context, which papers of
the library fit it better, and is the .bib in order (``citefinder check``, the app's Check view)."""
