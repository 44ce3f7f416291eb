"""The Streamlit app's helpers: cached resources, session-state keys, render helpers.

The only package in ``citefinder`` that imports streamlit (``resources``, ``state``, ``render``,
``layout``); ``markdown``, ``tables``, ``exports`` and ``connection`` are pure and testable alone.
"""
