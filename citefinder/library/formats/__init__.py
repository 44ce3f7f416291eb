"""One reader per file format; :func:`citefinder.library.readers.read_papers` picks by suffix."""
