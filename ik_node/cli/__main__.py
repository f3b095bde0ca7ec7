"""``python -m ik_node.cli ...``: the ``ik_node`` command (:func:`.main.main`)."""

import sys

from .main import main

if __name__ == "__main__":
    sys.exit(main())
