import sys

from poolscope.bench.cli import main

sys.exit(main())
