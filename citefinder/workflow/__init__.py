"""The workflow layer: each thing a user does, once, below both faces.

Fill a draft, check its citations, complete entries, search the literature and add a paper from it,
export, learn from picks, forget: each is a function or a small class here with typed inputs and
results. ``citefinder.cli`` turns arguments into these calls and their results into lines;
``citefinder.ui`` draws and reacts. This package imports neither face (import-linter's layers in
pyproject.toml), as JabRef's ``cli -> logic <- gui``.

Modules: ``fill`` (a draft's slots run, keys chosen, filled text), ``check`` (a draft's citations checked,
``--fix``), ``learn`` (picks learned and forgotten), ``bib_library`` (a .bib's library), ``enrich`` (entries
completed), ``add_paper`` (a literature paper added).
"""
