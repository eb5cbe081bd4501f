"""``python -m jtop_roof`` is the same as ``jroof-tui``."""

from jtop_roof.commands.main import main

raise SystemExit(main())
