import sys

from poolscope_bench.cli import main

sys.exit(main())
