"""The retrieval family's analysis commands, apart from its tasks: ``harness meta`` (meta.py, with aggregations,
significance and correlation), ``harness calibrate`` (calibrate.py, calibrate_fit.py) and ``harness g-sweep``
(g_quality.py, g_ladder.py, over g_common.py).

They read result records (selected by the role a task plays, never by its name) and run the tasks through
``harness.evaluate``; the tasks never import them.
"""
