"""The embedding back-ends: what turns a paper or a query into a vector.

``embedder`` (the Embedder every library folder records, by name or model folder), ``bert`` (MiniLM run without
sentence-transformers' imports), ``onnx_encoder`` and ``int8`` (the quantized MiniLM, built once into the cache),
``shipped`` (the models CiteFinder trained and ships in ``citefinder/models/``, rebuilt into the cache on first use),
``query_side`` (what embeds the dense agents' queries: the library's embedder or the trained query encoder) and
``static`` (the static token table distilled from MiniLM: a literature library's vectors in minutes).
"""
