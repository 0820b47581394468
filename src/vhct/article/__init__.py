"""The replication as an article: ``docs/article.pdf``, a replication report in the structure
ReScience C and the ML Reproducibility Challenge ask for, built from the shipped findings
(``docs/findings/``) or a finished run's results folder, with no optimizer run.

Its own layer above ``vhct.reporting`` (it imports reporting; nothing imports it). One job per
module: ``sources`` reads the input files (the audit through its one reader), ``costs`` computes the
run-time tables and the full-scale cost, ``record`` collects the typed record of everything the
article shows, ``figures`` draws its figures with the reporting layer's drawers, ``typeset`` renders
the Typst source from the templates (``templates/*.typ.j2``: all prose), ``build`` compiles it with
Typst (the ``typst`` wheel: no TeX install), ``__main__`` is the command line of ``make article``.
"""
