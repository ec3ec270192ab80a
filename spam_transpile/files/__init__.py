"""Files and settings for the command line and the integrations: which files a
run touches (``discover``), configuration (``config``), caches, atomic writes
(``write``) and what the user is told (``report``)."""
