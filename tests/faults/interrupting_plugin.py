"""A plugin whose import is interrupted (Ctrl-C while importing): that must stop the harness, not be swallowed."""

raise KeyboardInterrupt
