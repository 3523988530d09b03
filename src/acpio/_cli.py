"""The ``acpio`` command."""


def main() -> None:
    """Entry point of the ``acpio`` command."""
    raise SystemExit("acpio: the command-line tool is not built yet")
