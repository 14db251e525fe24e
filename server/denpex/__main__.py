import sys

from denpex.cli import main

sys.exit(main())
