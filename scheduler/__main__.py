"""``python -m scheduler``: the ``scheduler`` command line (see :mod:`scheduler.cli`)."""

from scheduler.cli import main

raise SystemExit(main())
