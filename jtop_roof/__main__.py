"""``python -m jtop_roof`` is the same as ``jroof-tui``."""

from jtop_roof.commands.cli import main

raise SystemExit(main())
