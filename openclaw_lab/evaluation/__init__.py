"""Measuring what a memory remembers: ranx metrics over item runs mapped to turns and sessions (``metrics``),
consolidation quality against fact labels (``quality``), and whether the answer fits a token budget
(``answers``)."""
