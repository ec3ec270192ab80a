"""Checks: what CPython would reject (``validate``), which cases can never run
(``reachability``), and the safety net before output leaves the tool (``verify``)."""
