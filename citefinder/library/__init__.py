"""A library folder: its store and indexes (store/), the embedding back-ends (encoders/), the import formats
(formats/), the citation-context memory (contexts/), and one module a job beside them (identity, records, link,
bibtex, keystyle, readonly, reference, ...). docs/ARCHITECTURE.md lists them."""
