"""Lowering stage: patterns to the intermediate form, then to if/elif code.

``lower`` turns one case's pattern into checks and bindings (one function per
pattern kind), ``transformer`` walks the module and replaces each match
statement, ``emit`` writes the tests.
"""
