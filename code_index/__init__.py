"""Code indexing: an organization's repositories, chunked along their syntax trees and searched by
meaning and by name next to the memories.

The app is ``code_index``, not ``code``: a top-level package named ``code`` would shadow Python's
standard-library module of that name, which ``manage.py shell``, ``pdb`` and ``pytest`` import.
It holds its own models (an index per repository, its files, chunks and runs), the chunker
(``chunking/``), the file walk with its ignore rules (``files.py``), the indexing pipeline that
Celery, beat and ``manage.py code_index`` run (``pipeline.py``), the writes agents make
(``services.py``), the reads (``selectors.py``) and hybrid code search (``search.py``), which ranks
with the memory search's own fusion (``memories.search.fusion``).
"""
