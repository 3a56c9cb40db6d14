"""An organization's memory taken out of a platform and brought into another: JSON Lines, a manifest
first and an end record last, every row of the organization's own in between (``records.py`` says
which and in what order), exported by ``export.py`` and imported, in one transaction, by
``importer.py``."""
