"""``python -m acpio._cli``: the same as the ``acpio`` command."""

from . import main

raise SystemExit(main())
