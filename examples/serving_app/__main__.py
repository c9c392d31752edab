import sys

from examples.serving_app.launcher import main

if __name__ == "__main__":  # spawned children re-import this module as __mp_main__
    sys.exit(main())
