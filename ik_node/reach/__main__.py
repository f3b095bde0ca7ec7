"""``python -m ik_node.reach ...``: the ``reach`` subcommand on its own (:func:`.command.main`)."""

import sys

from .command import main

if __name__ == "__main__":
    sys.exit(main())
