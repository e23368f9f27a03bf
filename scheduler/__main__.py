"""``python -m scheduler``: the ``scheduler`` command line (see :mod:`scheduler.cli.main`)."""

from scheduler.cli.main import main

raise SystemExit(main())
