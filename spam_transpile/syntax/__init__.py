"""Source text and LibCST trees, for every stage.

Reading (the parse stage): :mod:`.prescan`, the cheap test every entry
point runs first (can this text hold a match statement?); :mod:`.layout`,
the physical layout LibCST cannot take and how to put it back;
:mod:`.parse`, CPython's view of the file (its compile errors, pattern
nesting) and LibCST's parse; :mod:`.partial`, only the top-level statements
the lowering needs given to LibCST.

Walking and writing: :mod:`.blocks` (where a match statement can be),
:mod:`.cstwalk` (fields walked directly, not through visitors),
:mod:`.codegen` (LibCST's code generation without its position records).
"""
